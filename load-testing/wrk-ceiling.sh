#!/usr/bin/env bash
# The verification-only ceiling: userinfo and introspection driven by wrk (C, event-driven),
# because k6 on the same two cores saturates itself before Authrim does at these rates.
# Starts a fresh release server on loopback, seeds one token pool, and runs wrk for each
# endpoint; bounded in time, loopback only.
#   load-testing/wrk-ceiling.sh [--seconds 10] [--connections 64] [--bin PATH]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SECONDS_RUN=10 CONNS=64 BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_RUN="$2"; shift ;;
    --connections) CONNS="$2"; shift ;;
    --bin) BIN="$2"; shift ;;
    *) echo "wrk-ceiling.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else sudo apt-get install -y wrk; fi
fi
if [ -z "$BIN" ]; then (cd "$ROOT" && cargo build --release --locked --bin authrim); BIN="$ROOT/target/release/authrim"; fi
DATA=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
ADMIN="wrk-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
AUTHRIM_DATA_DIR="$DATA" AUTHRIM_LISTEN="127.0.0.1:$PORT" AUTHRIM_ISSUER="$BASE" AUTHRIM_ADMIN_TOKEN="$ADMIN" \
  AUTHRIM_ENABLE_TEST_ENDPOINTS=true AUTHRIM_LOG=warn "$BIN" serve >"$DATA/server.log" 2>&1 &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do curl -sf "$BASE/healthz" >/dev/null && break; sleep 0.1; done
python3 "$HERE/seed.py" --base "$BASE" --admin-token "$ADMIN" --scenario introspection --out "$DATA/seed.json" --count 1000 >/dev/null
TOKEN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tokens"][0])' "$DATA/seed.json")
RS_AUTH=$(python3 -c 'import base64,json,sys; s=json.load(open(sys.argv[1])); print(base64.b64encode("{}:{}".format(s["client_id"], s["client_secret"]).encode()).decode())' "$DATA/seed.json")
cat >"$DATA/introspect.lua" <<LUA
wrk.method = "POST"
wrk.body = "token=$TOKEN"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic $RS_AUTH"
LUA
echo "== userinfo ($CONNS connections, ${SECONDS_RUN}s)"
wrk -t2 -c"$CONNS" -d"${SECONDS_RUN}s" --latency -H "Authorization: Bearer $TOKEN" "$BASE/userinfo"
echo "== introspection ($CONNS connections, ${SECONDS_RUN}s)"
wrk -t2 -c"$CONNS" -d"${SECONDS_RUN}s" --latency -s "$DATA/introspect.lua" "$BASE/introspect"
echo "== server errors during the runs"
curl -s "$BASE/metrics" | grep -E '^authrim_oauth_errors_total' || echo "none"
echo "== server RSS: $(ps -o rss= -p $PID) KiB"
