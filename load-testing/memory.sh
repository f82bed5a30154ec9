#!/usr/bin/env bash
# Memory at scale: RSS of an idle server, then after seeding one million refresh-token families
# and one million sessions, then p99 of refresh rotation and userinfo under load on that
# server. Loopback only; bounded.   load-testing/memory.sh [--families N] [--sessions N] [--bin PATH]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/lib/server.sh"
FAMILIES=1000000 SESSIONS=1000000 BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --families) FAMILIES="$2"; shift ;;
    --sessions) SESSIONS="$2"; shift ;;
    --bin) BIN="$2"; shift ;;
    *) echo "memory.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
"$HERE/install-k6.sh" >/dev/null
[ -n "$BIN" ] || BIN=$(release_bin)
DATA=$(mktemp -d)
ADMIN="mem-$(random_token)"
PORT=$(free_port)
trap 'stop_server; rm -rf "$DATA"' EXIT
start_server "$BIN" "$DATA" "$ADMIN" "$DATA/server.log" "$PORT"
BASE=$SERVER_BASE
rss() { echo "$(( $(ps -o rss= -p "$SERVER_PID") / 1024 )) MiB"; }
sleep 1
echo "idle RSS: $(rss)"

python3 - "$BASE" "$ADMIN" "$FAMILIES" "$SESSIONS" "$DATA" <<'PY'
import json, sys, time, urllib.request
base, admin, families, sessions, data = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def post(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=3600) as r:
        return json.load(r)
c = post("/test/bulk/clients", {"count": 1, "prefix": "mem", "client": {
    "grant_types": ["authorization_code", "refresh_token"], "redirect_uris": ["https://rp.example/cb"],
    "scope": "openid profile email offline_access"}})["clients"][0]
users = [u["id"] for u in post("/test/bulk/users", {"count": 10000, "prefix": "mem-user", "password": "memory-test-pw"})["users"]]
t = time.time(); first = []
for done in range(0, families, 100000):
    n = min(100000, families - done)
    toks = post("/test/bulk/tokens", {"client_id": c["client_id"], "user_ids": users, "per_user": -(-n // len(users)),
                                      "kind": "valid", "token_type": "refresh_token", "scope": "offline_access"})["tokens"]
    first += toks[:max(0, 2000 - len(first))]
print(f"seeded {families} refresh families in {time.time() - t:.0f} s", flush=True)
t = time.time()
for done in range(0, sessions, 100000):
    n = min(100000, sessions - done)
    post("/test/bulk/sessions", {"user_ids": users, "per_user": -(-n // len(users))})
print(f"seeded {sessions} sessions in {time.time() - t:.0f} s", flush=True)
at = post("/test/bulk/tokens", {"client_id": c["client_id"], "user_ids": users[:1000], "kind": "valid", "scope": "openid profile email"})["tokens"]
json.dump({"client_id": c["client_id"], "client_secret": c["client_secret"], "tokens": first}, open(f"{data}/refresh.json", "w"))
json.dump({"tokens": at}, open(f"{data}/userinfo.json", "w"))
PY
echo "RSS after seeding (includes the seeding's own transient allocations): $(rss)"
# The steady state: restart on the same data, so the stores are loaded from disk with no
# seeding transients, and measure again.
stop_server
t0=$(date +%s.%N)
start_server "$BIN" "$DATA" "$ADMIN" "$DATA/server.log" "$PORT"
echo "restart with the seeded data: ready in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s, RSS $(rss)"
for s in refresh-rotation:refresh.json userinfo:userinfo.json; do
  echo "== ${s%%:*} at rps1000 (duration scale 0.1) on the seeded server"
  generator "$HERE/.bin/k6" run --quiet --no-usage-report --address 127.0.0.1:0 -e BASE_URL="$BASE" -e SEED_FILE="$DATA/${s#*:}" \
    -e PRESET=rps1000 -e DURATION_SCALE=0.1 -e SUMMARY_FILE="$DATA/${s%%:*}-summary.json" "$HERE/scenarios/${s%%:*}.js" | grep -E 'http_req_duration \(benchmark\)|scenario_success \(benchmark\)|FAIL' || true
done
echo "RSS after load: $(rss)"
