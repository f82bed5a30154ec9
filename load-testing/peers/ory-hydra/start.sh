#!/usr/bin/env bash
# Starts the Ory Hydra peer (built by build.sh) for the side-by-side benchmark:
#   load-testing/peers/ory-hydra/start.sh PORT ADMIN_PORT DATA_DIR >hydra.log 2>&1 &
#   pid=$!      # Hydra's own PID: this script ends by exec'ing it
#   until curl -sf http://127.0.0.1:PORT/health/ready >/dev/null; do sleep 0.1; done
#
# - public API on 127.0.0.1:PORT, issuer http://127.0.0.1:PORT; admin API on 127.0.0.1:ADMIN_PORT
#   (clients: POST /admin/clients; introspection: POST /admin/oauth2/introspect, no client auth);
# - SQLite at DATA_DIR/db.sqlite, migrated here; DATA_DIR/hydra.yml, the config, written here;
# - access tokens are JWTs (strategies.access_token: jwt), RS256, 1 h;
# - the signing keys are RSA-2048: Hydra would generate RSA-4096 keys on first use
#   (jwk/generate.go), so on a fresh DATA_DIR one RSA-2048 key (openssl) is imported into each of
#   its key sets (hydra.jwt.access-token, hydra.openid.id-token) through a short-lived
#   `hydra serve admin` on ADMIN_PORT, before the real server starts;
# - `--dev`, only because Hydra refuses a non-HTTPS issuer otherwise (driver/config/helper.go);
#   it changes cookie flags and allows http redirect URIs, not the token endpoint;
# - log level warn (no per-request log lines), telemetry off;
# - client secrets hashed with Hydra's default, PBKDF2-SHA256 at 25,000 iterations, checked on
#   every token request; PBKDF2_ITERATIONS=N (N >= 1) lowers that for clients created after
#   the start (a stored hash keeps the iterations it was made with).
# Rerunning with the same DATA_DIR keeps the database, secret, keys and clients.
set -euo pipefail
if [ $# -ne 3 ]; then echo "usage: $0 PORT ADMIN_PORT DATA_DIR" >&2; exit 2; fi
PORT=$1 ADMIN_PORT=$2
mkdir -p "$3"
DATA=$(cd "$3" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$HERE/.bin/hydra"
[ -x "$BIN" ] || { echo "start.sh: $BIN is missing; run $HERE/build.sh" >&2; exit 1; }

umask 077
[ -s "$DATA/system-secret" ] || openssl rand -hex 32 >"$DATA/system-secret"
cat >"$DATA/hydra.yml" <<YML
serve:
  public:
    host: 127.0.0.1
    port: $PORT
  admin:
    host: 127.0.0.1
    port: $ADMIN_PORT
urls:
  self:
    issuer: http://127.0.0.1:$PORT
secrets:
  system:
    - $(cat "$DATA/system-secret")
strategies:
  access_token: jwt
ttl:
  access_token: 1h
log:
  level: warn
sqa:
  opt_out: true
YML
if [ -n "${PBKDF2_ITERATIONS:-}" ]; then
  printf 'oauth2:\n  hashers:\n    pbkdf2:\n      iterations: %d\n' "$PBKDF2_ITERATIONS" >>"$DATA/hydra.yml"
fi
export DSN="sqlite://$DATA/db.sqlite?_fk=true"
"$BIN" migrate sql up -e --yes -c "$DATA/hydra.yml" >"$DATA/migrate.log" 2>&1 ||
  { echo "start.sh: migration failed:" >&2; cat "$DATA/migrate.log" >&2; exit 1; }

if [ ! -f "$DATA/keys-imported" ]; then
  "$BIN" serve admin --dev -c "$DATA/hydra.yml" >"$DATA/key-import.log" 2>&1 &
  seed=$!
  trap 'kill "$seed" 2>/dev/null || true' EXIT
  for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$ADMIN_PORT/health/ready" >/dev/null 2>&1 && break
    kill -0 "$seed" 2>/dev/null || break
    sleep 0.1
  done
  for set in hydra.jwt.access-token hydra.openid.id-token; do
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$DATA/$set.pem" 2>/dev/null
    "$BIN" import jwk "$set" "$DATA/$set.pem" --alg RS256 --use sig \
      --endpoint "http://127.0.0.1:$ADMIN_PORT" >>"$DATA/key-import.log" 2>&1 ||
      { echo "start.sh: key import failed:" >&2; cat "$DATA/key-import.log" >&2; exit 1; }
    rm -f "$DATA/$set.pem" # Hydra keeps it, encrypted with the system secret
  done
  kill "$seed"
  wait "$seed" 2>/dev/null || true
  trap - EXIT
  touch "$DATA/keys-imported"
fi

# Hydra prints a banner on stdout at start; it goes to stderr with the logs.
exec "$BIN" serve all --dev -c "$DATA/hydra.yml" >&2
