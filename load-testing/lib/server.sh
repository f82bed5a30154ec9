# Shared by run.sh, wrk-ceiling.sh and memory.sh (source it): build, start and stop an
# Authrim server on loopback with the test-only bulk interface enabled, and run the load
# generator beside it.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

random_token() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# The release binary, built if needed (build output on stderr).
release_bin() { (cd "$ROOT" && cargo build --release --locked --bin authrim) >&2; echo "$ROOT/target/release/authrim"; }

# wrk from Debian, installed if missing.
need_wrk() {
  command -v wrk >/dev/null && return 0
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else sudo apt-get install -y wrk; fi
}

# start_server BIN DATA_DIR ADMIN_TOKEN LOG [PORT]: sets SERVER_PID and SERVER_BASE and waits
# for /healthz (up to 2 minutes: a restart on a big data set loads it first).
start_server() {
  local bin=$1 data=$2 admin=$3 log=$4 port=${5:-$(free_port)}
  SERVER_BASE="http://127.0.0.1:$port"
  # Every load-generator connection comes from 127.0.0.1, and the larger presets hold more of
  # them than the default per-address cap (256): lift that cap, keep the global one.
  AUTHRIM_DATA_DIR="$data" AUTHRIM_LISTEN="127.0.0.1:$port" AUTHRIM_ISSUER="$SERVER_BASE" \
    AUTHRIM_ADMIN_TOKEN="$admin" AUTHRIM_ENABLE_TEST_ENDPOINTS=true AUTHRIM_LOG=warn \
    AUTHRIM_MAX_CONNECTIONS_PER_ADDRESS="${AUTHRIM_MAX_CONNECTIONS_PER_ADDRESS:-100000}" \
    $(policy_prefix --other) "$bin" serve >>"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1200); do
    curl -sf "$SERVER_BASE/healthz" >/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "authrim did not start; see $log" >&2
  return 1
}

stop_server() { kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }

# generator CMD...: runs a load generator (k6, wrk) under AUTHRIM_LOAD_GENERATOR_POLICY.
# The generator shares the machine's cores with the server. Under the default policy every
# response wakes a generator thread that preempts the server on the spot, which a generator on
# another machine would not do: wrk drew 48k userinfo requests a second from the server under
# SCHED_BATCH against 36–38k under the default. Batch threads never preempt on wake-up and still
# get their fair share at the tick. `other` keeps the default policy.
generator() {
  case "${AUTHRIM_LOAD_GENERATOR_POLICY:-batch}" in
    batch) $(policy_prefix --batch) "$@" ;;
    other) "$@" ;;
    *) echo "AUTHRIM_LOAD_GENERATOR_POLICY is batch or other" >&2; return 2 ;;
  esac
}

# policy_prefix --batch|--other: the chrt command that runs a program under that policy, or
# nothing (with a warning) where chrt is missing or the policy is refused.
policy_prefix() {
  if chrt "$1" 0 true 2>/dev/null; then
    echo "chrt $1 0"
  else
    echo "warning: cannot run under chrt $1 here; using the inherited policy" >&2
  fi
}
