#!/usr/bin/env bash
# Starts a MongoDB-wire server for the tests: FerretDB v1 with its SQLite
# backend (no PostgreSQL needed), on 127.0.0.1:${FERRETDB_PORT:-57017}.
# There is no MongoDB server package on Debian; production uses MongoDB.
# Idempotent: already running -> nothing to do. Reuses a built binary
# ($FERRETDB_BIN, <repo>/.services/bin/ferretdb, $HOME/go/bin/ferretdb or PATH);
# otherwise builds FerretDB $FERRETDB_VERSION from the Go module proxy (minutes).
# Writes <repo>/.services/ferretdb.env (MONGO_URL).
# Stop: test/services/ferretdb.sh stop
#
# FERRETDB_BACKEND=pg: a second FerretDB, on its PostgreSQL backend, for the
# docdb-pg-pool rows of make bench (the SQLite backend scans a whole table for
# an update by _id): on 127.0.0.1:${FERRETDB_PG_PORT:-FERRETDB_PORT + 1}, its
# data in the database "ferretdb" of the PostgreSQL that postgres.sh starts
# (PG_PORT; started here when it is not running). Writes
# <repo>/.services/ferretdb-pg.env (MONGO_PG_URL, FERRETDB_POSTGRESQL_URL): other
# names than the SQLite one's, so both files can be sourced together. Each
# table FerretDB creates there gets a GIN index on _id (entities: on the types
# too), which FerretDB 1.24 does not make (see below; FERRETDB_PG_INDEXES=0: none).
# Stop: FERRETDB_BACKEND=pg test/services/ferretdb.sh stop (PostgreSQL stays).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FERRETDB_PORT="${FERRETDB_PORT:-57017}"
FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.0}"   # v1.24.1 is not served by the module proxy
FERRETDB_BACKEND="${FERRETDB_BACKEND:-sqlite}"
case "$FERRETDB_BACKEND" in
  sqlite)
    FDB_ROOT="$SERVICES_DIR/ferretdb"
    ENV_FILE="$SERVICES_DIR/ferretdb.env"
    ;;
  pg)
    FERRETDB_PORT="${FERRETDB_PG_PORT:-$((FERRETDB_PORT + 1))}"
    FDB_ROOT="$SERVICES_DIR/ferretdb-pg"
    ENV_FILE="$SERVICES_DIR/ferretdb-pg.env"
    ;;
  *) svc_die "FERRETDB_BACKEND='$FERRETDB_BACKEND': sqlite or pg" ;;
esac
PIDFILE="$FDB_ROOT/ferretdb.pid"
mkdir -p "$FDB_ROOT/data" "$FDB_ROOT/state"

PG_DATABASE=ferretdb
write_env() {
  if [ "$FERRETDB_BACKEND" = pg ]; then
    # shellcheck disable=SC1091 # written by postgres.sh
    . "$SERVICES_DIR/postgres.env"
    svc_write_env "$ENV_FILE" "MONGO_PG_URL=mongodb://127.0.0.1:$FERRETDB_PORT/" \
      "FERRETDB_POSTGRESQL_URL=postgres://postgres@127.0.0.1:$PGPORT/$PG_DATABASE"
  else
    svc_write_env "$ENV_FILE" "MONGO_URL=mongodb://127.0.0.1:$FERRETDB_PORT/"
  fi
}

running_pid() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && cat "$PIDFILE"
}

if [ "${1:-start}" = "stop" ]; then
  if pid=$(running_pid); then kill "$pid"; fi
  rm -f "$PIDFILE"
  exit 0
fi

# The PostgreSQL backend's server first (idempotent): a FerretDB found running answers only while it runs.
if [ "$FERRETDB_BACKEND" = pg ]; then
  bash "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"
  # shellcheck disable=SC1091 # written by postgres.sh
  . "$SERVICES_DIR/postgres.env"
  PSQL=/usr/lib/postgresql/15/bin/psql   # postgres.sh's
  if [ -z "$("$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -qAt -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'")" ]; then
    "$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -q -c "CREATE DATABASE $PG_DATABASE" >/dev/null \
      || svc_die "could not create the database $PG_DATABASE on 127.0.0.1:$PGPORT"
  fi
  # FerretDB 1.24 pushes an equality down to PostgreSQL as `_jsonb->'<field>' @> <value>`, which its unique btree index
  # on `_jsonb->'_id'` cannot serve: every read, update and delete by _id scanned its table (157 ms at 100,000
  # documents, against 0.01 ms through a GIN index on that expression). So each table FerretDB creates in this database
  # gets such an index on `_id`, and an entities table one on `t` (the types, which the broker indexes on MongoDB):
  # what MongoDB's _id index and the broker's `type` index give there. FERRETDB_PG_INDEXES=0 leaves FerretDB's own.
  if [ "${FERRETDB_PG_INDEXES:-1}" = 1 ]; then
    "$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -d "$PG_DATABASE" -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || svc_die "could not install the index trigger in $PG_DATABASE"
SET client_min_messages = warning;
CREATE OR REPLACE FUNCTION ldb_gin_indexes() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT objid FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE TABLE' AND object_type = 'table' LOOP
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = r.objid AND attname = '_jsonb') THEN
      EXECUTE format('CREATE INDEX ON %s USING gin ((_jsonb->''_id''))', r.objid::regclass);
      IF (SELECT relname FROM pg_class WHERE oid = r.objid) LIKE 'entities\_%' THEN
        EXECUTE format('CREATE INDEX ON %s USING gin ((_jsonb->''t''))', r.objid::regclass);
      END IF;
    END IF;
  END LOOP;
END $$;
DROP EVENT TRIGGER IF EXISTS ldb_gin_indexes;
CREATE EVENT TRIGGER ldb_gin_indexes ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION ldb_gin_indexes();
SQL
  else
    "$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -d "$PG_DATABASE" -q -c "SET client_min_messages = warning" -c "DROP EVENT TRIGGER IF EXISTS ldb_gin_indexes" >/dev/null
  fi
fi
if running_pid >/dev/null && svc_port_open "$FERRETDB_PORT"; then
  write_env
  svc_log "FerretDB already running on 127.0.0.1:$FERRETDB_PORT (connection info: $ENV_FILE)"
  exit 0
fi
# One start (and build) at a time: run-all.sh and the exporter's tests, run beside it, both start FerretDB, and two
# builds in one directory remove each other's files ("getwd: no such file or directory"). One lock for both backends:
# they share the binary and its build directory.
LOCK="$SERVICES_DIR/ferretdb/.lock"
mkdir -p "$(dirname "$LOCK")"
exec 9>"$LOCK"
flock -w 900 9 || svc_die "another start of FerretDB holds $LOCK for over 15 minutes"
if running_pid >/dev/null && svc_port_open "$FERRETDB_PORT"; then
  write_env
  svc_log "FerretDB already running on 127.0.0.1:$FERRETDB_PORT (connection info: $ENV_FILE)"
  exit 0
fi
svc_port_open "$FERRETDB_PORT" && svc_die "port $FERRETDB_PORT is taken by another program"

find_binary() {
  local b
  for b in "${FERRETDB_BIN:-}" "$SERVICES_DIR/bin/ferretdb" "$HOME/go/bin/ferretdb" "$(command -v ferretdb || true)"; do
    if [ -n "$b" ] && [ -x "$b" ] && "$b" --version >/dev/null 2>&1; then echo "$b"; return 0; fi
  done
  return 1
}

build_binary() {
  local go=""
  for go in "$(command -v go || true)" /usr/local/go/bin/go; do [ -n "$go" ] && [ -x "$go" ] && break; done
  [ -n "$go" ] && [ -x "$go" ] || svc_die "no ferretdb binary and no Go toolchain to build one"
  local dir="$SERVICES_DIR/ferretdb-build" log="$SERVICES_DIR/logs/ferretdb-build.log"
  svc_log "building FerretDB $FERRETDB_VERSION with $go (takes minutes; log $log)"
  rm -rf "$dir" && mkdir -p "$dir"
  (
    cd "$dir"
    export GOFLAGS=-mod=mod
    # A module of our own that depends on FerretDB: 'go install pkg@version'
    # needs the proxy's version list, which is not served here.
    printf 'module ldbroker.local/ferretdb-build\n\ngo 1.21\n' >go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/FerretDB/FerretDB/cmd/ferretdb"\n' >tools.go
    "$go" get "github.com/FerretDB/FerretDB/cmd/ferretdb@$FERRETDB_VERSION"
    # The module zip lacks the generated build/version/version.txt that the
    # binary embeds: build from a writable copy that has it.
    src="$("$go" list -m -f '{{.Dir}}' github.com/FerretDB/FerretDB)"
    cp -r "$src" ./src && chmod -R u+w ./src
    echo "$FERRETDB_VERSION" >./src/build/version/version.txt
    "$go" mod edit -replace github.com/FerretDB/FerretDB=./src
    "$go" build -o "$SERVICES_DIR/bin/ferretdb" github.com/FerretDB/FerretDB/cmd/ferretdb
  ) >"$log" 2>&1 || { tail -20 "$log" >&2; svc_die "building FerretDB failed, see $log"; }
  echo "$SERVICES_DIR/bin/ferretdb"
}

BIN="$(find_binary || build_binary)"
LOG="$FDB_ROOT/ferretdb.log"
if [ "$FERRETDB_BACKEND" = pg ]; then
  BACKEND_ARGS=(--handler=postgresql --postgresql-url="postgres://postgres@127.0.0.1:$PGPORT/$PG_DATABASE")
  WHAT="PostgreSQL backend, database $PG_DATABASE on 127.0.0.1:$PGPORT"
else
  BACKEND_ARGS=(--handler=sqlite --sqlite-url="file:$FDB_ROOT/data/")
  WHAT="SQLite backend, data $FDB_ROOT/data"
fi
nohup "$BIN" "${BACKEND_ARGS[@]}" --state-dir="$FDB_ROOT/state" \
  --listen-addr="127.0.0.1:$FERRETDB_PORT" --debug-addr=- --telemetry=disable --log-level=warn \
  >"$LOG" 2>&1 </dev/null 9>&- &
echo $! >"$PIDFILE"
if ! svc_wait_port "$FERRETDB_PORT" 30; then
  tail -20 "$LOG" >&2 || true
  svc_die "FerretDB did not start, see $LOG"
fi
write_env
svc_log "FerretDB $("$BIN" --version 2>/dev/null | head -1 | sed 's/version: //') listening on 127.0.0.1:$FERRETDB_PORT ($WHAT; connection info: $ENV_FILE)"
