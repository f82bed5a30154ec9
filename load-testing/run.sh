#!/usr/bin/env bash
# One command for the whole load-testing pipeline: for each scenario and preset, start a fresh
# Authrim (test-only bulk interface on, loopback only), seed it, snapshot /metrics, run the k6
# scenario, snapshot /metrics again, and write the reports (load-testing/results/<time>/).
#
#   load-testing/run.sh --quick                         every scenario at the `smoke` preset (what CI runs)
#   load-testing/run.sh --scenario userinfo --preset rps1000 --preset rps2000
#   options: --scenario S (repeat), --preset P (repeat), --duration-scale X, --bin PATH (default: release build)
#
# Exits non-zero when a k6 threshold fails (success < 99 % or client p95 ≥ 300 ms).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/lib/server.sh"
ALL=(token-exchange refresh-rotation authorization-code userinfo silent-auth introspection)
SCENARIOS=() PRESETS=() SCALE=1 BIN="" QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --scenario) SCENARIOS+=("$2"); shift ;;
    --preset) PRESETS+=("$2"); shift ;;
    --duration-scale) SCALE="$2"; shift ;;
    --bin) BIN="$2"; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=("${ALL[@]}")
if [ ${#PRESETS[@]} -eq 0 ]; then
  if [ "$QUICK" = 1 ]; then PRESETS=(smoke); else PRESETS=(rps100); fi
fi

"$HERE/install-k6.sh" >/dev/null
K6="$HERE/.bin/k6"
[ -n "$BIN" ] || BIN=$(release_bin)
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

OUT="$HERE/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
ADMIN="load-$(random_token)"
MACHINE="$(nproc) vCPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -sr)"
failed=()

# How many seeds a run consumes: codes are single-use, refresh families one per VU.
seed_count() {
  python3 - "$1" "$2" "$3" <<'PY'
import math, sys
scenario, preset, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
if preset == "smoke":
    rate, iterations = 10, 5 * 2 + 45
else:
    rate = int(preset[3:])
    iterations = min(50, rate) * 30 + rate * (0.25 * 15 + 0.75 * 180 + 0.5 * 15)
iterations = math.ceil(iterations * scale * 1.2) + 50
max_vus = max(20, math.ceil(rate * 1.5 / 10))
print({"authorization-code": iterations, "refresh-rotation": max(1000, 2 * max_vus)}.get(scenario, 0))
PY
}

for scenario in "${SCENARIOS[@]}"; do
  for preset in "${PRESETS[@]}"; do
    RUN="$OUT/$scenario/$preset"
    mkdir -p "$RUN"
    start_server "$BIN" "$RUN/data" "$ADMIN" "$RUN/server.log"
    base=$SERVER_BASE
    echo "==> $scenario @ $preset (server pid $SERVER_PID, $base)"
    python3 "$HERE/seed.py" --base "$base" --admin-token "$ADMIN" --scenario "$scenario" \
      --out "$RUN/seed.json" --count "$(seed_count "$scenario" "$preset" "$SCALE")"
    curl -sf "$base/metrics" >"$RUN/metrics-before.txt"
    started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    set +e
    generator "$K6" run --quiet --no-usage-report --address 127.0.0.1:0 -e BASE_URL="$base" -e SEED_FILE="$RUN/seed.json" -e PRESET="$preset" \
      -e DURATION_SCALE="$SCALE" -e SUMMARY_FILE="$RUN/summary.json" "$HERE/scenarios/$scenario.js" 2>&1 | tee "$RUN/k6.log"
    rc=${PIPESTATUS[0]}
    set -e
    curl -sf "$base/metrics" >"$RUN/metrics-after.txt" || true
    stop_server
    rm -rf "$RUN/data"
    target=$([ "$preset" = smoke ] && echo 10 || echo "${preset#rps}")
    python3 - "$RUN/run.json" "$scenario" "$preset" "$target" "$started" "$MACHINE" <<'PY'
import json, sys
path, scenario, preset, target, started, machine = sys.argv[1:]
json.dump({"scenario": scenario, "preset": preset, "target_rps": int(target), "started": started,
           "machine": machine, "shards": {}}, open(path, "w"))
PY
    [ "$rc" = 0 ] || failed+=("$scenario@$preset (k6 exit $rc)")
  done
  python3 "$HERE/report.py" --out "$OUT/$scenario" "$OUT/$scenario"/*/
done

{
  echo "# Load-test results $(basename "$OUT")"
  echo
  echo "Machine: $MACHINE"
  echo
  for scenario in "${SCENARIOS[@]}"; do echo "- [$scenario]($scenario/report.md)"; done
} >"$OUT/index.md"
echo "reports: $OUT/index.md"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'threshold failures:\n'; printf '  %s\n' "${failed[@]}"
  exit 1
fi
