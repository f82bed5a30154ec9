#!/usr/bin/env bash
# GET /authorize with a registered public client (A), a Client ID Metadata Document client
# from the cache (B) and a new document client on every request (C, cache full: every insert
# evicts the oldest), in one session, alternated A B C / C B A / A B C. Per run: wrk RPS and
# latency, Authrim's CPU per request (utime+stime from /proc ÷ requests) and the document
# server's (main.go here). docs/benchmarks.md, "Agents: client ID metadata documents".
#   load-testing/cimd-docs/bench.sh [--bin PATH] [--seconds 10] [--warmup 2] [--connections 16]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LT=$(dirname "$HERE")
ROOT=$(dirname "$LT")
. "$LT/lib/server.sh"
BIN="" SECS=10 WARM=2 CONNS=16 ORDER="A B C C B A A B C"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift ;;
    --seconds) SECS="$2"; shift ;;
    --warmup) WARM="$2"; shift ;;
    --connections) CONNS="$2"; shift ;;
    --order) ORDER="$2"; shift ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
need_wrk
[ -n "$BIN" ] || BIN=$(release_bin)
DATA=$(mktemp -d)
ADMIN="cimd-$(random_token)"
DOCS_PID=""
trap 'stop_server; [ -n "$DOCS_PID" ] && kill "$DOCS_PID" 2>/dev/null; rm -rf "$DATA"' EXIT

(cd "$HERE" && go build -o "$DATA/cimd-docs" .)
DOCS_PORT=$(free_port)
DOCS="http://127.0.0.1:$DOCS_PORT"
"$DATA/cimd-docs" -listen "127.0.0.1:$DOCS_PORT" 2>"$DATA/docs.log" &
DOCS_PID=$!

export AUTHRIM_CLIENT_ID_METADATA_DOCUMENTS=any AUTHRIM_FETCH_ALLOW_PRIVATE_ADDRESSES=true \
  AUTHRIM_MAX_CONCURRENT_FETCHES=64 AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_MAX_ENTRIES=1000 AUTHRIM_LOG_FORMAT=json
start_server "$BIN" "$DATA/authrim" "$ADMIN" "$DATA/server.log"
BASE=$SERVER_BASE
curl -sf "$DOCS/c/probe.json" >/dev/null || { echo "document server did not start" >&2; exit 1; }
curl -sf -o /dev/null -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
  -d '{"client_id":"pub","redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}' "$BASE/admin/clients"

enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
REST="redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&scope=openid&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
status() { curl -s -o "$DATA/body" -w '%{http_code}' "$BASE/authorize?response_type=code&client_id=$(enc "$1")&$REST"; }
# The status, and the page's <title> or the start of the error (what the 200 and the 400 are).
check() {
  local got; got=$(status "$2")
  echo "check: $1 -> $got (want $3): $(grep -o '<title>[^<]*' "$DATA/body" | head -1 || true)$(grep -q '<title>' "$DATA/body" || head -c 200 "$DATA/body") $(grep -o 'metadata document[^<]*' "$DATA/body" | head -1 || true)"
  [ "$got" = "$3" ] || exit 1
}
check "registered pub" pub 200
check "document (fixed)" "$DOCS/c/fixed.json" 200
check "document (new)" "$DOCS/c/check-$(random_token).json" 200
check "document naming another URL" "$DOCS/bad/x.json" 400

args_for() {
  case "$1" in
    A) echo "registered pub" ;;
    B) echo "cached $DOCS/c/fixed.json" ;;
    C) echo "cold $DOCS/c/" ;;
  esac
}
ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }  # utime + stime, clock ticks
HZ=$(getconf CLK_TCK)
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

echo "case requests rps p50_ms p99_ms non200 errors authrim_us_per_req docs_us_per_req authrim_rss_kib"
for c in $ORDER; do
  # shellcheck disable=SC2046
  generator wrk -t2 -c"$CONNS" -d"${WARM}s" -s "$HERE/authorize.lua" "$BASE" -- $(args_for "$c") >/dev/null
  a0=$(ticks "$SERVER_PID") d0=$(ticks "$DOCS_PID")
  # shellcheck disable=SC2046
  out=$(generator wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$HERE/authorize.lua" "$BASE" -- $(args_for "$c"))
  a1=$(ticks "$SERVER_PID") d1=$(ticks "$DOCS_PID")
  line=$(grep '^RESULT' <<<"$out")
  req=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<<"$line")
  python3 - "$c" "$line" "$req" "$((a1 - a0))" "$((d1 - d0))" "$HZ" "$(rss "$SERVER_PID")" <<'PY'
import sys
c, line, req, da, dd, hz, rss = sys.argv[1:]
f = dict(kv.split("=") for kv in line.split()[1:])
us = lambda t: int(t) / int(hz) * 1e6 / int(req)
print(c, f["requests"], f["rps"], f["p50_ms"], f["p99_ms"], f["non200"], f["errors"], f"{us(da):.1f}", f"{us(dd):.1f}", rss)
PY
done
echo "authrim RSS at the end: $(rss "$SERVER_PID") KiB; document server RSS: $(rss "$DOCS_PID") KiB"
curl -s "$BASE/metrics" | grep -iE 'document|fetch' | grep -v '^#' || true
