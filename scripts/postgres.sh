#!/usr/bin/env bash
# A throwaway PostgreSQL for the store tests, from Debian's packages.
#
#   bash scripts/postgres.sh start DIR   installs postgresql with apt-get when no initdb/pg_ctl is found under
#                                        /usr/lib/postgresql/*/bin (once), creates a cluster in DIR/data (trust
#                                        auth, loopback only), starts it on a free 127.0.0.1 port and prints its
#                                        URL (postgres://acp@127.0.0.1:PORT/acp) as the last line of stdout
#   bash scripts/postgres.sh stop DIR    stops that cluster (immediate shutdown); DIR is left for the caller
#
# Idempotent: `start` on a DIR whose cluster runs prints its URL again; on one stopped, starts it on its port. Root cannot run postgres, so as root
# the cluster belongs to the `postgres` user (created by the Debian package). Everything but the URL goes to
# stderr. Durability settings are off (fsync=off): this cluster holds test data only.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }
die() {
  log "$*"
  exit 1
}

find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

install_postgres() {
  command -v apt-get >/dev/null 2>&1 || die "initdb/pg_ctl not found under /usr/lib/postgresql/*/bin and apt-get is not available: install postgresql by hand"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "initdb/pg_ctl not found and installing postgresql needs root (or sudo)"
    sudo="sudo -n"
  fi
  log "installing postgresql with apt-get (once)"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2 || die "apt-get update failed (no network?): cannot install postgresql"
  $sudo apt-get install -y -qq postgresql >&2 || die "apt-get install postgresql failed (no network?)"
}

# Runs a command as the cluster's owner: the caller, or `postgres` when the caller is root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

url_of() {
  echo "postgres://acp@127.0.0.1:$1/acp"
}

start() {
  local dir="$1" bin port
  bin="$(find_bin)" || {
    install_postgres
    bin="$(find_bin)" || die "postgresql was installed but no initdb/pg_ctl is under /usr/lib/postgresql/*/bin"
  }
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root but there is no \`postgres\` user to own the cluster"
    chown postgres "$dir"
  fi
  chmod 700 "$dir"
  if [ -f "$dir/port" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    url_of "$(cat "$dir/port")"
    return 0
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U acp --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >&2 ||
      die "initdb failed in \`$dir/data\`"
  fi
  local attempt
  for attempt in 1 2 3; do
    # a cluster started here before and stopped starts again on its port (a test starts its database late)
    if [ "$attempt" -eq 1 ] && [ -f "$dir/port" ]; then port="$(cat "$dir/port")"; else port="$(free_port)"; fi
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 15 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >&2; then
      echo "$port" >"$dir/port"
      as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U acp acp 2>/dev/null || true
      url_of "$port"
      return 0
    fi
    log "start on port $port failed (attempt $attempt); see $dir/server.log"
  done
  tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
  die "could not start postgresql in \`$dir\`"
}

stop() {
  local dir="$1" bin
  bin="$(find_bin)" || exit 0
  [ -f "$dir/data/PG_VERSION" ] || exit 0
  as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
}

case "${1:-}" in
  start) [ -n "${2:-}" ] || die "usage: postgres.sh start DIR"; start "$2" ;;
  stop) [ -n "${2:-}" ] || die "usage: postgres.sh stop DIR"; stop "$2" ;;
  *) die "usage: postgres.sh start|stop DIR" ;;
esac
