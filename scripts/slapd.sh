#!/usr/bin/env bash
# A throwaway OpenLDAP server on loopback, for the LDAP tests (tests/integration/ldap.rs).
#   scripts/slapd.sh start DIR PORT [TLS_PORT]   write a config in DIR (an mdb database, suffix
#                                                dc=example,dc=org, root cn=admin,dc=example,dc=org
#                                                with password "admin-secret"), start slapd on
#                                                ldap://127.0.0.1:PORT; prints that URL. With
#                                                DIR/tls/{cert,key}.pem present: StartTLS on PORT
#                                                and ldaps:// on TLS_PORT too.
#   scripts/slapd.sh stop DIR                    stop it (and wait until it is gone)
# Installs Debian's slapd and ldap-utils when they are missing. Nothing outside DIR is used:
# not /etc/ldap/slapd.d, not the system's slapd service.
set -euo pipefail

ensure_installed() {
  command -v slapd >/dev/null 2>&1 || [ -x /usr/sbin/slapd ] || {
    echo "==> installing OpenLDAP (Debian packages slapd, ldap-utils)" >&2
    local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq slapd ldap-utils >&2
  }
  command -v ldapadd >/dev/null 2>&1 || { echo "ldapadd missing: install ldap-utils" >&2; exit 1; }
}

cmd=${1:?usage: slapd.sh start DIR PORT [TLS_PORT] | stop DIR}
dir=$(realpath -m "${2:?directory}")
case "$cmd" in
  start)
    port=${3:?port}
    tls_port=${4:-}
    ensure_installed
    slapd=$(command -v slapd || echo /usr/sbin/slapd)
    mkdir -p "$dir/db"
    urls="ldap://127.0.0.1:$port/"
    tls=""
    if [ -f "$dir/tls/cert.pem" ] && [ -f "$dir/tls/key.pem" ]; then
      tls="TLSCertificateFile $dir/tls/cert.pem
TLSCertificateKeyFile $dir/tls/key.pem"
      [ -n "$tls_port" ] && urls="$urls ldaps://127.0.0.1:$tls_port/"
    fi
    # msuser.schema: Active Directory's attributes (userAccountControl, objectGUID,
    # sAMAccountName), for entries that look like AD's to the tests.
    cat >"$dir/slapd.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
include /etc/ldap/schema/msuser.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload ppolicy
pidfile $dir/slapd.pid
argsfile $dir/slapd.args
$tls
database mdb
maxsize 16777216
suffix "dc=example,dc=org"
rootdn "cn=admin,dc=example,dc=org"
rootpw admin-secret
directory $dir/db
overlay ppolicy
ppolicy_default "cn=default,ou=policies,dc=example,dc=org"
ppolicy_use_lockout
access to attrs=userPassword by anonymous auth by self write by * none
access to * by * read
EOF
    "$slapd" -f "$dir/slapd.conf" -h "$urls" -n authrim-test-slapd >"$dir/slapd.log" 2>&1 || {
      cat "$dir/slapd.log" >&2; "$slapd" -Tt -f "$dir/slapd.conf" >&2 || true; exit 1; }
    for _ in $(seq 1 100); do
      ldapsearch -x -H "ldap://127.0.0.1:$port/" -b "" -s base >/dev/null 2>&1 && break
      sleep 0.1
    done
    ldapsearch -x -H "ldap://127.0.0.1:$port/" -b "" -s base >/dev/null 2>&1 || { echo "slapd did not answer" >&2; exit 1; }
    echo "ldap://127.0.0.1:$port"
    ;;
  stop)
    [ -f "$dir/slapd.pid" ] || exit 0
    pid=$(cat "$dir/slapd.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
