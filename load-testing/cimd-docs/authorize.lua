-- wrk script: GET /authorize (code flow, PKCE, no session: 200 with the login page) for one
-- of three kinds of client (docs/benchmarks.md, "Agents: client ID metadata documents"):
--   wrk … -s authorize.lua http://127.0.0.1:PORT -- registered pub
--   wrk … -s authorize.lua http://127.0.0.1:PORT -- cached http://127.0.0.1:8790/c/fixed.json
--   wrk … -s authorize.lua http://127.0.0.1:PORT -- cold http://127.0.0.1:8790/c/
-- `cold` names a new document URL on every request (<prefix><run>-<thread>-<n>.json).
-- Prints one line at the end: RESULT requests=… seconds=… rps=… p50_ms=… p99_ms=… non200=… errors=…
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

local REST = "&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&scope=openid&state=s"
  .. "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
local function enc(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

local kind, fixed, prefix, n
bad = 0
function init(args)
  kind = args[1] or "registered"
  if kind == "cold" then
    prefix = args[2] .. string.format("%d-%d-", os.time(), id)
    n = 0
  else
    fixed = wrk.format("GET", "/authorize?response_type=code&client_id=" .. enc(args[2] or "pub") .. REST)
  end
end

function request()
  if kind ~= "cold" then return fixed end
  n = n + 1
  return wrk.format("GET", "/authorize?response_type=code&client_id=" .. enc(prefix .. n .. ".json") .. REST)
end

function response(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end

function done(summary, latency, requests)
  local non200 = 0
  for _, t in ipairs(threads) do non200 = non200 + t:get("bad") end
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT requests=%d seconds=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f non200=%d errors=%d\n",
    summary.requests, secs, summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    non200, e.connect + e.read + e.write + e.timeout))
end
