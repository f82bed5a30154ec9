#!/usr/bin/env bash
# Starts the Keycloak peer (fetched by fetch.sh) for the side-by-side benchmark:
#   CLIENT_SECRET=… RS_SECRET=… load-testing/peers/keycloak/start.sh PORT DATA_DIR >kc.log 2>&1 &
#   pid=$!      # the JVM's own PID: this script ends by exec'ing java
#   until curl -sf http://127.0.0.1:PORT/realms/bench/.well-known/openid-configuration >/dev/null; do sleep 0.5; done
#
# - production mode, `kc.sh start --optimized`, on a server image built once with `kc.sh build
#   --db=dev-file` (the only build-time option; rebuilt when it changes). HTTP only, on
#   127.0.0.1:PORT; hostname http://127.0.0.1:PORT, so the issuer is
#   http://127.0.0.1:PORT/realms/bench; local caches (no cluster); log level warn (no line per
#   request; failed requests still log a WARN event line);
# - the H2 file database (`dev-file`) at DATA_DIR/h2/ and the transaction object store at
#   DATA_DIR/transaction-logs/, not in the distribution's data/ directory;
# - realm `bench`, imported on a fresh DATA_DIR by `kc.sh import` from DATA_DIR/realm.json
#   (written here, removed after): client scope `svc` (in the token's `scope`, adds `rs` to the
#   access token's audience); client `svc` (confidential, client_secret_basic, secret
#   $CLIENT_SECRET, service account for client credentials, optional scope `svc`, no default
#   scopes) and client `rs` (confidential, secret $RS_SECRET, no grants), which introspects.
#   The realm has only that client scope (no profile/email/roles…), so access tokens carry exp,
#   iat, jti, iss, aud, sub, typ, azp and scope. RS256, 1 h, signed with the realm's generated
#   RSA-2048 key;
# - no admin user: the benchmark does not use the admin API.
# kc.sh runs java as a child and waits for it. So this script runs kc.sh with JAVA pointing at a
# stub that records the command line, then execs java with it (Keycloak's own JVM options: G1,
# -Xms64m -Xmx512m, …): `$!` is the JVM, whose /proc/PID/stat holds all of Keycloak's CPU.
# Rerunning with the same DATA_DIR keeps the database, keys, clients and secrets.
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 PORT DATA_DIR" >&2; exit 2; fi
PORT=$1
mkdir -p "$2"
DATA=$(cd "$2" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
KC=$("$HERE/fetch.sh")
REALM=bench

BUILD_OPTS=(--db=dev-file)
if [ "$(cat "$KC/.peers-build" 2>/dev/null)" != "${BUILD_OPTS[*]}" ]; then
  echo "start.sh: kc.sh build ${BUILD_OPTS[*]} (once; about a minute on 2 cores)" >&2
  "$KC/bin/kc.sh" build "${BUILD_OPTS[@]}" >"$DATA/build.log" 2>&1 ||
    { echo "start.sh: kc.sh build failed:" >&2; cat "$DATA/build.log" >&2; exit 1; }
  echo "${BUILD_OPTS[*]}" >"$KC/.peers-build"
fi

# Runtime options, shared by the import and the server.
# The transaction manager's object store too goes under DATA_DIR.
OPTS=(--optimized "--db-url=jdbc:h2:file:$DATA/h2/keycloakdb;NON_KEYWORDS=VALUE" --log-level=warn
  "-Dquarkus.transaction-manager.object-store.directory=$DATA/transaction-logs")

umask 077
if [ ! -f "$DATA/realm-imported" ]; then
  : "${CLIENT_SECRET:?start.sh: CLIENT_SECRET is required on a fresh DATA_DIR}"
  : "${RS_SECRET:?start.sh: RS_SECRET is required on a fresh DATA_DIR}"
  CLIENT_SECRET=$CLIENT_SECRET RS_SECRET=$RS_SECRET REALM=$REALM python3 - >"$DATA/realm.json" <<'PY'
import json, os
confidential = {"enabled": True, "protocol": "openid-connect", "publicClient": False,
                "clientAuthenticatorType": "client-secret", "standardFlowEnabled": False,
                "implicitFlowEnabled": False, "directAccessGrantsEnabled": False,
                "fullScopeAllowed": False}
print(json.dumps({
    "realm": os.environ["REALM"], "enabled": True,
    "accessTokenLifespan": 3600, "defaultSignatureAlgorithm": "RS256",
    "clientScopes": [
        {"name": "svc", "protocol": "openid-connect",
         "attributes": {"include.in.token.scope": "true", "display.on.consent.screen": "false"},
         # Since 26.6.2 (keycloak/keycloak#49113) introspection answers active: false unless
         # the introspecting client is in the token's audience.
         "protocolMappers": [
             {"name": "aud-rs", "protocol": "openid-connect", "protocolMapper": "oidc-audience-mapper",
              "config": {"included.client.audience": "rs", "access.token.claim": "true",
                         "introspection.token.claim": "true", "id.token.claim": "false"}},
         ]},
    ],
    "clients": [
        dict(confidential, clientId="svc", secret=os.environ["CLIENT_SECRET"],
             serviceAccountsEnabled=True, defaultClientScopes=[],
             optionalClientScopes=["svc"]),
        dict(confidential, clientId="rs", secret=os.environ["RS_SECRET"],
             serviceAccountsEnabled=False, defaultClientScopes=[], optionalClientScopes=[]),
    ],
}, indent=2))
PY
  "$KC/bin/kc.sh" import "${OPTS[@]}" --file "$DATA/realm.json" >"$DATA/import.log" 2>&1 ||
    { echo "start.sh: realm import failed:" >&2; cat "$DATA/import.log" >&2; exit 1; }
  rm -f "$DATA/realm.json" # Keycloak keeps the secrets, in its database
  touch "$DATA/realm-imported"
fi

# The command line kc.sh would run, one NUL-terminated argument at a time.
cat >"$DATA/java-argv" <<'SH'
#!/bin/sh
for arg in "$@"; do printf '%s\0' "$arg"; done >"$KC_ARGV_OUT"
SH
chmod +x "$DATA/java-argv"
JAVA="$DATA/java-argv" KC_ARGV_OUT="$DATA/java.argv" "$KC/bin/kc.sh" start "${OPTS[@]}" --cache=local \
  --http-enabled=true --http-host=127.0.0.1 --http-port="$PORT" \
  --hostname="http://127.0.0.1:$PORT" >/dev/null
mapfile -d '' -t ARGV <"$DATA/java.argv"
for i in "${!ARGV[@]}"; do
  case "${ARGV[$i]}" in -Dkc.script.pid=*) ARGV[i]="-Dkc.script.pid=$$" ;; esac
done
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" "${ARGV[@]}"
