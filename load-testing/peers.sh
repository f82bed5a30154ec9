#!/usr/bin/env bash
# Authrim beside its peers (load-testing/peers/: node-oidc-provider, Ory Hydra, Keycloak) on this
# machine in one run, driven by the same wrk commands under the same generator policy as the rest
# of the suite:
#   issuance       POST token endpoint, client credentials (Basic), an RS256 JWT access token
#                  signed with an RSA-2048 key
#   introspection  POST introspection endpoint of one such token (see peers/README.md for how
#                  each peer introspects)
# Each measurement runs every server in turn, for --rounds rounds. Reported per run: RPS, p99,
# non-2xx answers, the server's CPU per request (user + system, /proc), and for issuance that
# CPU over the server's own signature cost. All servers stay up; those not under load idle.
# Before the first round, every server gets --warmup seconds of each test, unmeasured: a JVM
# (Keycloak) compiles its hot paths only after thousands of requests, and a cold figure would
# overstate its cost.
#   load-testing/peers.sh [--seconds 10] [--warmup 20] [--connections 64] [--rounds 2] [--peer NAME]... [--bin PATH]
# NAME is node-oidc-provider, ory-hydra or keycloak (default: all three).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/lib/server.sh"
SECONDS_RUN=10 WARMUP=20 CONNS=64 ROUNDS=2 BIN="" PEERS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_RUN="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --connections) CONNS="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --peer) PEERS+=("$2"); shift ;;
    --bin) BIN="$2"; shift ;;
    *) echo "peers.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ ${#PEERS[@]} -gt 0 ] || PEERS=(node-oidc-provider ory-hydra keycloak)
need_wrk
[ -n "$BIN" ] || BIN=$(release_bin)
DATA=$(mktemp -d)
PIDS=()
trap 'stop_server; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DATA"' EXIT

b64() { printf '%s' "$1" | base64 -w0; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
endpoint() { curl -sf "$1/.well-known/openid-configuration" | json_field "$2"; }
# wrk_script SIDE TEST BODY [BASIC_AUTH]: the wrk script POSTing BODY.
wrk_script() {
  {
    echo 'wrk.method = "POST"'
    echo "wrk.body = \"$3\""
    echo 'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"'
    [ -z "${4:-}" ] || echo "wrk.headers[\"Authorization\"] = \"Basic $(b64 "$4")\""
  } >"$DATA/$1/$2.lua"
}
# token_of ENDPOINT ID:SECRET [curl args]: a client-credentials access token.
token_of() {
  local ep=$1 auth=$2; shift 2
  curl -sf -u "$auth" -d grant_type=client_credentials -d scope=svc "$@" "$ep" | json_field access_token
}
require_rs256() {
  local header
  header=$(printf '%s' "$2" | cut -d. -f1 | tr '_-' '/+' | base64 -d 2>/dev/null || true)
  case "$header" in *RS256*) ;; *) echo "$1: the access token is not an RS256 JWT: $header" >&2; exit 1 ;; esac
}
# introspection SIDE URL BODY [BASIC_AUTH]: checks that one such request answers
# `active: true`, then writes the side's wrk script and URL for it.
introspection() {
  [ "$(curl -sf ${4:+-u "$4"} -d "$3" "$2" | json_field active)" = True ] ||
    { echo "$1: the token to introspect is not active" >&2; exit 1; }
  wrk_script "$1" introspection "$3" "${4:-}"
  echo "$2" >"$DATA/$1/introspection.url"
}
# finish_side SIDE PID TOKEN_URL SIGNATURE: what the measurement loop reads.
finish_side() { echo "$2" >"$DATA/$1/pid"; echo "$3" >"$DATA/$1/issuance.url"; echo "$4" >"$DATA/$1/sign"; }

setup_authrim() {
  local admin base svc rs tok_ep tok
  admin="peers-$(random_token)"
  start_server "$BIN" "$DATA/authrim/data" "$admin" "$DATA/authrim/log"
  base=$SERVER_BASE AUTHRIM=$SERVER_BASE
  client() { curl -sf -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' -d "$1" "$base/admin/clients" | json_field client_secret; }
  svc=$(client '{"client_id": "svc", "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"}')
  rs=$(client '{"client_id": "rs", "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "rs"}')
  tok_ep=$(endpoint "$base" token_endpoint)
  tok=$(token_of "$tok_ep" "svc:$svc"); require_rs256 authrim "$tok"
  wrk_script authrim issuance "grant_type=client_credentials&scope=svc" "svc:$svc"
  introspection authrim "$(endpoint "$base" introspection_endpoint)" "token=$tok" "rs:$rs"
  # Authrim's signatures are measured where it makes them, under the load (its metrics).
  finish_side authrim "$SERVER_PID" "$tok_ep" metrics
  echo "authrim $("$BIN" --version | awk '{print $2}')" >"$DATA/authrim/version"
}

setup_node_oidc_provider() {
  local dir="$HERE/peers/node-oidc-provider" port svc rs base tok_ep tok opaque sign
  (cd "$dir" && npm ci --silent --no-audit --no-fund >/dev/null)
  port=$(free_port) svc="svc-$(random_token)" rs="rs-$(random_token)"
  PORT=$port CLIENT_SECRET=$svc RS_SECRET=$rs NODE_ENV=production \
    $(policy_prefix --other) node "$dir/server.mjs" >"$DATA/node-oidc-provider/log" 2>&1 &
  PIDS+=($!)
  base="http://127.0.0.1:$port"
  for _ in $(seq 100); do grep -qs ready "$DATA/node-oidc-provider/log" && break; sleep 0.1; done
  grep -q ready "$DATA/node-oidc-provider/log" || { cat "$DATA/node-oidc-provider/log" >&2; exit 1; }
  tok_ep=$(endpoint "$base" token_endpoint)
  tok=$(token_of "$tok_ep" "svc:$svc"); require_rs256 node-oidc-provider "$tok"
  # It does not introspect JWT access tokens: an opaque one, from the same instance.
  opaque=$(token_of "$tok_ep" "svc:$svc" -d resource=https://opaque.api.example.com)
  wrk_script node-oidc-provider issuance "grant_type=client_credentials&scope=svc" "svc:$svc"
  introspection node-oidc-provider "$(endpoint "$base" introspection_endpoint)" "token=$opaque" "rs:$rs"
  sign=$(node -e "
    const c = require('crypto'); const { privateKey } = c.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const m = Buffer.from('bench message'); for (let i = 0; i < 50; i++) c.sign('sha256', m, privateKey);
    const t = process.hrtime.bigint(); for (let i = 0; i < 500; i++) c.sign('sha256', m, privateKey);
    console.log((Number(process.hrtime.bigint() - t) / 500 / 1000).toFixed(1));")
  finish_side node-oidc-provider "${PIDS[-1]}" "$tok_ep" "$sign"
  echo "node-oidc-provider $(node -p "require('$dir/node_modules/oidc-provider/package.json').version") (node $(node --version))" >"$DATA/node-oidc-provider/version"
}

setup_ory_hydra() {
  local dir="$HERE/peers/ory-hydra" bin port admin_port base admin svc tok_ep tok
  bin=$("$dir/build.sh")
  port=$(free_port) admin_port=$(free_port) svc="svc-$(random_token)"
  # HYDRA_PBKDF2_ITERATIONS=N: its client-secret hasher at N iterations instead of 25,000.
  PBKDF2_ITERATIONS=${HYDRA_PBKDF2_ITERATIONS:-} \
    $(policy_prefix --other) "$dir/start.sh" "$port" "$admin_port" "$DATA/ory-hydra/data" >"$DATA/ory-hydra/log" 2>&1 &
  PIDS+=($!)
  base="http://127.0.0.1:$port" admin="http://127.0.0.1:$admin_port"
  for _ in $(seq 300); do curl -sf "$base/health/ready" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -sf "$base/health/ready" >/dev/null || { cat "$DATA/ory-hydra/log" >&2; exit 1; }
  curl -sf -H 'Content-Type: application/json' "$admin/admin/clients" -d "{\"client_id\": \"svc\", \"client_secret\": \"$svc\",
    \"grant_types\": [\"client_credentials\"], \"token_endpoint_auth_method\": \"client_secret_basic\", \"scope\": \"svc\"}" >/dev/null
  tok_ep=$(endpoint "$base" token_endpoint)
  tok=$(token_of "$tok_ep" "svc:$svc"); require_rs256 ory-hydra "$tok"
  wrk_script ory-hydra issuance "grant_type=client_credentials&scope=svc" "svc:$svc"
  # Introspection is on the admin port and takes no client authentication.
  introspection ory-hydra "$admin/admin/oauth2/introspect" "token=$tok"
  finish_side ory-hydra "${PIDS[-1]}" "$tok_ep" "$(cd "$dir" && go run signcost.go)"
  echo "ory-hydra $("$bin" version 2>/dev/null | awk '/Version:/{print $2}') (client secrets: PBKDF2-SHA256, ${HYDRA_PBKDF2_ITERATIONS:-25000} iterations)" >"$DATA/ory-hydra/version"
}

setup_keycloak() {
  local dir="$HERE/peers/keycloak" home port svc rs base tok_ep tok
  home=$("$dir/fetch.sh")
  port=$(free_port) svc="svc-$(random_token)" rs="rs-$(random_token)"
  CLIENT_SECRET=$svc RS_SECRET=$rs \
    $(policy_prefix --other) "$dir/start.sh" "$port" "$DATA/keycloak/data" >"$DATA/keycloak/log" 2>&1 &
  PIDS+=($!)
  base="http://127.0.0.1:$port/realms/bench"
  # Up to 3 minutes: the first start after a fetch builds the server image (kc.sh build), then
  # each fresh data directory takes a realm import and a JVM start (~25 s on 2 cores).
  for _ in $(seq 1800); do
    curl -sf "$base/.well-known/openid-configuration" >/dev/null 2>&1 && break
    kill -0 "${PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  curl -sf "$base/.well-known/openid-configuration" >/dev/null || { cat "$DATA/keycloak/log" >&2; exit 1; }
  tok_ep=$(endpoint "$base" token_endpoint)
  tok=$(token_of "$tok_ep" "svc:$svc"); require_rs256 keycloak "$tok"
  wrk_script keycloak issuance "grant_type=client_credentials&scope=svc" "svc:$svc"
  # The client-credentials token is introspectable as it carries `rs` in its audience (scope
  # `svc` maps it there): Keycloak 26.6.2+ answers active: false to a client not in it.
  introspection keycloak "$(endpoint "$base" introspection_endpoint)" "token=$tok" "rs:$rs"
  finish_side keycloak "${PIDS[-1]}" "$tok_ep" "$(cd "$dir" && java SignCost.java)"
  echo "keycloak $(sed -n 's/^Keycloak - Version //p' "$home/version.txt") (java $(java -version 2>&1 | awk -F'"' '/version/{print $2; exit}'))" >"$DATA/keycloak/version"
}

SIDES=(authrim "${PEERS[@]}")
for side in "${SIDES[@]}"; do
  mkdir -p "$DATA/$side"
  case "$side" in
    authrim) setup_authrim ;;
    node-oidc-provider) setup_node_oidc_provider ;;
    ory-hydra) setup_ory_hydra ;;
    keycloak) setup_keycloak ;;
    *) echo "peers.sh: unknown peer $side" >&2; exit 2 ;;
  esac
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Authrim's signatures: total thread CPU and count.
signing() { curl -sf "$AUTHRIM/metrics" | awk '/^authrim_token_signing_cpu_seconds_(sum|count) /{printf "%s ", $2}'; }
for side in "${SIDES[@]}"; do
  echo "- $(cat "$DATA/$side/version"); RS256 signature: $(sed 's/^metrics$/measured under load/; s/^[0-9.]*$/& µs in a quiet loop/' "$DATA/$side/sign")"
done
echo "- generator policy: ${AUTHRIM_LOAD_GENERATOR_POLICY:-batch}; wrk -t2 -c$CONNS -d${SECONDS_RUN}s, after ${WARMUP} s of warm-up per server and test"
echo
echo "| round | test | server | requests | RPS | p99 | non-2xx | server CPU/request | ÷ its signature |"
echo "|---:|---|---|---:|---:|---:|---:|---:|---:|"
# drive SIDE TEST SECONDS [WRK_OPTION]...: the test's wrk command against the side.
drive() { generator wrk -t2 -c"$CONNS" -d"$3s" "${@:4}" -s "$DATA/$1/$2.lua" "$(cat "$DATA/$1/$2.url")"; }
if [ "$WARMUP" -gt 0 ]; then
  for test in issuance introspection; do
    for side in "${SIDES[@]}"; do drive "$side" "$test" "$WARMUP" >/dev/null; done
  done
fi
for round in $(seq "$ROUNDS"); do
  for test in issuance introspection; do
    for side in "${SIDES[@]}"; do
      pid=$(cat "$DATA/$side/pid")
      before=$(cpu_ticks "$pid") sig_before=$(signing)
      drive "$side" "$test" "$SECONDS_RUN" --latency >"$DATA/wrk.out"
      after=$(cpu_ticks "$pid") sig_after=$(signing)
      python3 - "$round" "$test" "$side" "$before" "$after" "$(getconf CLK_TCK)" "$DATA/wrk.out" "$sig_before" "$sig_after" "$(cat "$DATA/$side/sign")" <<'PY'
import re, sys
rnd, test, side, before, after, hz, out, sig_before, sig_after, sign = sys.argv[1:]
text = open(out).read()
n = int(re.search(r"(\d+) requests in", text).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
# The latency distribution's line, not a stats column that ends in "99%" (91.99%).
p99 = re.search(r"^\s*99%\s+(\S+)", text, re.M).group(1)
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
cpu = (float(after) - float(before)) / float(hz) / max(n, 1) * 1e6
# Issuance makes one signature a request.
ratio = "–"
if test == "issuance":
    if sign == "metrics":
        (s0, c0), (s1, c1) = (map(float, v.split()) for v in (sig_before, sig_after))
        sign_us = (s1 - s0) / max(c1 - c0, 1) * 1e6
    else:
        sign_us = float(sign)
    ratio = f"{cpu / sign_us:.2f}× of {sign_us:.0f} µs"
print(f"| {rnd} | {test} | {side} | {n:,} | {rps:,.0f} | {p99} | {bad.group(1) if bad else 0} | {cpu:.0f} µs | {ratio} |")
PY
    done
  done
done
