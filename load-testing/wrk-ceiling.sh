#!/usr/bin/env bash
# The verification-only ceiling: userinfo and introspection driven by wrk (C, event-driven),
# because k6 on the same two cores saturates itself before Authrim does at these rates.
# Starts a fresh release server on loopback, seeds one token pool, and runs wrk for each
# endpoint; bounded in time, loopback only.
#   load-testing/wrk-ceiling.sh [--seconds 10] [--connections 64] [--bin PATH]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/lib/server.sh"
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
need_wrk
[ -n "$BIN" ] || BIN=$(release_bin)
DATA=$(mktemp -d)
ADMIN="wrk-$(random_token)"
trap 'stop_server; rm -rf "$DATA"' EXIT
start_server "$BIN" "$DATA" "$ADMIN" "$DATA/server.log"
BASE=$SERVER_BASE
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
generator wrk -t2 -c"$CONNS" -d"${SECONDS_RUN}s" --latency -H "Authorization: Bearer $TOKEN" "$BASE/userinfo"
echo "== introspection ($CONNS connections, ${SECONDS_RUN}s)"
generator wrk -t2 -c"$CONNS" -d"${SECONDS_RUN}s" --latency -s "$DATA/introspect.lua" "$BASE/introspect"
echo "== server errors during the runs"
curl -s "$BASE/metrics" | grep -E '^authrim_oauth_errors_total' || echo "none"
echo "== server RSS: $(ps -o rss= -p "$SERVER_PID") KiB"
