#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for the tests and benchmarks.
#   scripts/pg.sh start DIR PORT   create (if needed) and start a cluster in DIR on PORT;
#                                  prints the superuser URL (trust auth, loopback only)
#   scripts/pg.sh stop DIR         stop it (fast shutdown)
#   scripts/pg.sh kill DIR         stop it abruptly (immediate shutdown: an outage)
# Installs PostgreSQL from Debian's packages when it is missing. PostgreSQL refuses to run
# as root, so under root the cluster belongs to the `postgres` user (created if absent).
set -euo pipefail

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

ensure_installed() {
  [ -n "$(bindir)" ] && [ -x "$(bindir)/pg_ctl" ] && return
  echo "==> installing PostgreSQL (Debian packages)" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq postgresql >&2
  else sudo apt-get update -qq && sudo apt-get install -y -qq postgresql >&2; fi
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cmd=${1:?usage: pg.sh start DIR PORT | stop DIR | kill DIR}
dir=${2:?cluster directory}
case "$cmd" in
  start)
    port=${3:?port}
    ensure_installed
    bin=$(bindir)
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
      useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    fi
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -U authrim --auth=trust -E UTF8 --no-instructions >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB" start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://authrim@127.0.0.1:$port/postgres"
    ;;
  stop) as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ;;
  kill) as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
