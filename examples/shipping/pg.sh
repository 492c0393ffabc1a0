#!/usr/bin/env bash
# pg.sh start DIR PORT | pg.sh stop DIR
#
# A throwaway PostgreSQL cluster with wal_level=logical for the shipping
# example's source database: created with initdb in DIR/data on first use
# (with the database shop and its orders from shop.sql), started on
# 127.0.0.1:PORT only, and stopped again. run.sh and shipping_test.go both
# use it, so that the test runs the cluster the example runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

pgbin() {
  local p
  if p="$(command -v initdb)"; then
    p="$(readlink -f "$p")"
    if [ -x "$(dirname "$p")/pg_ctl" ]; then dirname "$p"; return; fi
  fi
  p="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n | tail -n 1)"
  if [ -n "$p" ] && [ -x "$p/initdb" ]; then echo "$p"; return; fi
  echo "pg.sh: initdb is not installed (neither in PATH nor in /usr/lib/postgresql/*/bin)" >&2
  exit 3
}

# initdb refuses to run as root: as root, the cluster runs as postgres.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
  dir="$2" port="$3"
  bin="$(pgbin)"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  fresh=
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale --no-sync >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    fresh=1
  fi
  # Written on every start, so that the port given is the one used.
  cat >"$dir/postgresql.auto.conf.new" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$(cd "$dir" && pwd)'
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
CONF
  as_owner cp "$dir/postgresql.auto.conf.new" "$dir/data/postgresql.auto.conf"
  rm -f "$dir/postgresql.auto.conf.new"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
    { tail -n 20 "$dir/server.log" >&2; exit 1; }
  if [ -n "$fresh" ]; then
    psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'CREATE DATABASE shop'
    psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d shop -f "$here/shop.sql"
  fi
  ;;
stop)
  dir="$2"
  bin="$(pgbin)"
  [ -f "$dir/data/postmaster.pid" ] || exit 0
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
  ;;
*)
  echo "usage: pg.sh start DIR PORT | pg.sh stop DIR" >&2
  exit 2
  ;;
esac
