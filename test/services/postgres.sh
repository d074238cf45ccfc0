#!/usr/bin/env bash
# Starts PostgreSQL 15 with PostGIS on 127.0.0.1:${PG_PORT:-55432} for the tests.
# Idempotent: already running -> nothing to do. Installs the Debian packages
# postgresql-15 and postgresql-15-postgis-3 when missing (as root).
# Writes <repo>/.services/postgres.env (PGHOST, PGPORT, PGUSER, TROE_URL).
# Stop: test/services/postgres.sh stop
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_PORT="${PG_PORT:-55432}"
PG_VERSION=15
PGBIN="/usr/lib/postgresql/$PG_VERSION/bin"   # the Debian package's, not whatever pg_ctl is on PATH
ENV_FILE="$SERVICES_DIR/postgres.env"

svc_apt_install "postgresql-$PG_VERSION" "postgresql-$PG_VERSION-postgis-3"
[ -x "$PGBIN/pg_ctl" ] || svc_die "$PGBIN/pg_ctl not found"

# PostgreSQL refuses to run as root: as root, run it as the postgres user.
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || svc_die "no postgres user (the postgresql-$PG_VERSION package creates it)"
  as_pg() { runuser -u postgres -- "$@"; }
else
  as_pg() { "$@"; }
fi

# Data under .services/ when the postgres user can reach it, else under /var/lib.
PG_ROOT="$SERVICES_DIR/postgres"
mkdir -p "$PG_ROOT"
if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$PG_ROOT"
  if ! runuser -u postgres -- test -w "$PG_ROOT"; then
    PG_ROOT="/var/lib/ldbroker-test-services/$(echo -n "$SERVICES_DIR" | md5sum | cut -c1-12)/postgres"
    mkdir -p "$PG_ROOT" && chown postgres: "$PG_ROOT" "$(dirname "$PG_ROOT")"
  fi
fi
PGDATA="$PG_ROOT/data"
PGRUN="$PG_ROOT/run"

write_env() {
  svc_write_env "$ENV_FILE" "PGHOST=127.0.0.1" "PGPORT=$PG_PORT" "PGUSER=postgres" \
    "TROE_URL=postgresql://postgres@127.0.0.1:$PG_PORT"
}

if [ "${1:-start}" = "stop" ]; then
  if [ -f "$PGDATA/postmaster.pid" ]; then as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop; fi
  exit 0
fi

# -t: on a loaded machine a running server can take over the default 3 s to answer (then a second start failed).
# -t: on a loaded machine a running server can take over pg_isready's default 3 s to answer (a second start then failed).
if "$PGBIN/pg_isready" -q -t 20 -h 127.0.0.1 -p "$PG_PORT"; then
  write_env
  svc_log "PostgreSQL already running on 127.0.0.1:$PG_PORT (connection info: $ENV_FILE)"
  exit 0
fi
svc_port_open "$PG_PORT" && svc_die "port $PG_PORT is taken by something that is not PostgreSQL"

if [ ! -f "$PGDATA/PG_VERSION" ]; then
  svc_log "initdb $PGDATA"
  as_pg mkdir -p "$PGDATA" "$PGRUN"
  as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    >"$SERVICES_DIR/logs/postgres-initdb.log" 2>&1 || svc_die "initdb failed, see $SERVICES_DIR/logs/postgres-initdb.log"
fi
as_pg mkdir -p "$PGRUN"
LOG="$PG_ROOT/postgres.log"
# The port is in the kernel's ephemeral range: a test's outgoing connection or port-0 listener can hold it for a moment
# (a CI run's start failed with "could not bind ... Address already in use" while nothing was left listening on it).
# So a start refused for its address is tried again, a few times, a second apart.
started=0
for attempt in 1 2 3 4 5; do
  if as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$LOG" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PGRUN -c fsync=off -c max_connections=50" \
    start >/dev/null; then
    started=1
    break
  fi
  tail -n 5 "$LOG" | grep -q "Address already in use" || break
  svc_log "port $PG_PORT busy for a moment (attempt $attempt): starting PostgreSQL again"
  sleep 1
done
[ "$started" = 1 ] || { tail -20 "$LOG" >&2 || true; svc_die "PostgreSQL did not start, see $LOG"; }
"$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 30 || svc_die "PostgreSQL not ready on port $PG_PORT"
# PostGIS must be creatable (the history tables use GEOGRAPHY columns)
"$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qAt \
  -c "SELECT name FROM pg_available_extensions WHERE name='postgis'" | grep -q postgis \
  || svc_die "the postgis extension is not available"
write_env
svc_log "PostgreSQL $PG_VERSION (PostGIS) listening on 127.0.0.1:$PG_PORT, data $PGDATA (connection info: $ENV_FILE)"
