#!/usr/bin/env bash
# Authrim beside a peer, node-oidc-provider (load-testing/peers/), on this machine in one run,
# driven by the same wrk commands under the same generator policy as the rest of the suite:
#   issuance       POST token endpoint, client credentials (Basic), an RS256 JWT access token
#                  signed with an RSA-2048 key
#   introspection  POST introspection endpoint (Basic, a resource server) of one such token
# Each measurement alternates the two servers, for --rounds rounds. Reported per run: RPS, p99,
# non-2xx answers, and the server process's CPU per request (user + system, /proc). Both
# servers stay up for the whole run; the one not under load is idle.
#   load-testing/peers.sh [--seconds 10] [--connections 64] [--rounds 2] [--bin PATH]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/lib/server.sh"
SECONDS_RUN=10 CONNS=64 ROUNDS=2 BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_RUN="$2"; shift ;;
    --connections) CONNS="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --bin) BIN="$2"; shift ;;
    *) echo "peers.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else sudo apt-get install -y wrk; fi
fi
PEER_DIR="$HERE/peers/node-oidc-provider"
(cd "$PEER_DIR" && npm ci --silent --no-audit --no-fund >/dev/null)
[ -n "$BIN" ] || BIN=$(release_bin)
DATA=$(mktemp -d)
ADMIN="peers-$(random_token)"
PEER_PID=""
trap 'stop_server; [ -z "$PEER_PID" ] || kill "$PEER_PID" 2>/dev/null; rm -rf "$DATA"' EXIT

# Authrim: a client-credentials client and a resource server, through the operator interface.
start_server "$BIN" "$DATA/authrim" "$ADMIN" "$DATA/authrim.log"
AUTHRIM=$SERVER_BASE
admin_client() { curl -sf -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' -d "$1" "$AUTHRIM/admin/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_secret"])'; }
A_SVC=$(admin_client '{"client_id": "svc", "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"}')
A_RS=$(admin_client '{"client_id": "rs", "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "rs"}')

# The peer, with the same two clients.
PEER_PORT=$(free_port) P_SVC="svc-$(random_token)" P_RS="rs-$(random_token)"
PORT=$PEER_PORT CLIENT_SECRET=$P_SVC RS_SECRET=$P_RS NODE_ENV=production \
  $(policy_prefix --other) node "$PEER_DIR/server.mjs" >"$DATA/peer.log" 2>&1 &
PEER_PID=$!
PEER="http://127.0.0.1:$PEER_PORT"
for _ in $(seq 100); do grep -q ready "$DATA/peer.log" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$DATA/peer.log" || { echo "the peer did not start; see below" >&2; cat "$DATA/peer.log" >&2; exit 1; }
PEER_VERSION=$(node -p "require('$PEER_DIR/node_modules/oidc-provider/package.json').version")

endpoint() { curl -sf "$1/.well-known/openid-configuration" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
b64() { printf '%s' "$1" | base64 -w0; }
# lua NAME AUTH BODY: a wrk script POSTing BODY with Basic AUTH.
lua() {
  cat >"$DATA/$1.lua" <<LUA
wrk.method = "POST"
wrk.body = "$3"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic $2"
LUA
}
# token_of ENDPOINT ID:SECRET [curl args]: a client-credentials access token.
token_of() {
  local ep=$1 auth=$2; shift 2
  curl -sf -u "$auth" -d grant_type=client_credentials -d scope=svc "$@" "$ep" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}

for side in authrim peer; do
  if [ $side = authrim ]; then base=$AUTHRIM svc=$A_SVC rs=$A_RS; else base=$PEER svc=$P_SVC rs=$P_RS; fi
  tok_ep=$(endpoint "$base" token_endpoint) intro_ep=$(endpoint "$base" introspection_endpoint)
  tok=$(token_of "$tok_ep" "svc:$svc")
  header=$(printf '%s' "$tok" | cut -d. -f1 | tr '_-' '/+' | base64 -d 2>/dev/null || true)
  case "$header" in *RS256*) ;; *) echo "$side: the access token is not an RS256 JWT: $header" >&2; exit 1 ;; esac
  lua "$side-issuance" "$(b64 "svc:$svc")" "grant_type=client_credentials&scope=svc"
  # oidc-provider does not introspect JWT access tokens: it gets an opaque one (peers/README.md).
  intro_tok=$tok
  [ $side = authrim ] || intro_tok=$(token_of "$tok_ep" "svc:$svc" -d resource=https://opaque.api.example.com)
  active=$(curl -sf -u "rs:$rs" -d "token=$intro_tok" "$intro_ep" | python3 -c 'import json,sys; print(json.load(sys.stdin)["active"])')
  [ "$active" = True ] || { echo "$side: the token to introspect is not active" >&2; exit 1; }
  lua "$side-introspection" "$(b64 "rs:$rs")" "token=$intro_tok"
  printf '%s\n' "$tok_ep" >"$DATA/$side-issuance.url"
  printf '%s\n' "$intro_ep" >"$DATA/$side-introspection.url"
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Authrim's signatures: total thread CPU and count, from its own metrics.
signing() { curl -sf "$AUTHRIM/metrics" | awk '/^authrim_token_signing_cpu_seconds_(sum|count) /{printf "%s ", $2}'; }
# The peer's: an RSA-2048 RS256 signature through node's crypto in a quiet loop, in µs.
NODE_SIGN=$(node -e "
const c = require('crypto'); const { privateKey } = c.generateKeyPairSync('rsa', { modulusLength: 2048 });
const m = Buffer.from('bench message'); for (let i = 0; i < 50; i++) c.sign('sha256', m, privateKey);
const t = process.hrtime.bigint(); for (let i = 0; i < 500; i++) c.sign('sha256', m, privateKey);
console.log((Number(process.hrtime.bigint() - t) / 500 / 1000).toFixed(1));")
echo "RSA-2048 signature through node's crypto in a quiet loop: $NODE_SIGN µs"
echo
echo "| round | test | server | requests | RPS | p99 | non-2xx | server CPU/request | ÷ its signature |"
echo "|---:|---|---|---:|---:|---:|---:|---:|---:|"
for round in $(seq "$ROUNDS"); do
  for test in issuance introspection; do
    for side in authrim peer; do
      pid=$([ $side = authrim ] && echo "$SERVER_PID" || echo "$PEER_PID")
      before=$(cpu_ticks "$pid") sig_before=$(signing)
      generator wrk -t2 -c"$CONNS" -d"${SECONDS_RUN}s" --latency -s "$DATA/$side-$test.lua" "$(cat "$DATA/$side-$test.url")" >"$DATA/wrk.out"
      after=$(cpu_ticks "$pid") sig_after=$(signing)
      python3 - "$round" "$test" "$side" "$before" "$after" "$(getconf CLK_TCK)" "$DATA/wrk.out" "$sig_before" "$sig_after" "$NODE_SIGN" <<'PY'
import re, sys
rnd, test, side, before, after, hz, out, sig_before, sig_after, node_sign = sys.argv[1:]
text = open(out).read()
n = int(re.search(r"(\d+) requests in", text).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"99%\s+(\S+)", text).group(1)
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
cpu = (float(after) - float(before)) / float(hz) / max(n, 1) * 1e6
# Issuance makes one signature a request: Authrim's under this load (its metrics), the peer's
# from the quiet loop.
ratio = "–"
if test == "issuance":
    if side == "authrim":
        (s0, c0), (s1, c1) = (map(float, v.split()) for v in (sig_before, sig_after))
        sign_us = (s1 - s0) / max(c1 - c0, 1) * 1e6
    else:
        sign_us = float(node_sign)
    ratio = f"{cpu / sign_us:.2f}× of {sign_us:.0f} µs"
print(f"| {rnd} | {test} | {side} | {n:,} | {rps:,.0f} | {p99} | {bad.group(1) if bad else 0} | {cpu:.0f} µs | {ratio} |")
PY
    done
  done
done
echo
echo "Authrim: $("$BIN" --version 2>/dev/null || echo "$BIN"); peer: node-oidc-provider $PEER_VERSION on node $(node --version); generator policy: ${AUTHRIM_LOAD_GENERATOR_POLICY:-batch}"
