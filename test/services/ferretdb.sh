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
# names than the SQLite one's, so both files can be sourced together.
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
  PSQL=/usr/lib/postgresql/15/bin/psql   # postgres.sh's
  if [ -z "$("$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -qAt -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'")" ]; then
    "$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -q -c "CREATE DATABASE $PG_DATABASE" >/dev/null \
      || svc_die "could not create the database $PG_DATABASE on 127.0.0.1:$PGPORT"
  fi
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
