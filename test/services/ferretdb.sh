#!/usr/bin/env bash
# Starts a MongoDB-wire server for the tests: FerretDB v1 with its SQLite
# backend (no PostgreSQL needed), on 127.0.0.1:${FERRETDB_PORT:-57017}.
# There is no MongoDB server package on Debian; production uses MongoDB.
# Idempotent: already running -> nothing to do. Reuses a built binary
# ($FERRETDB_BIN, <repo>/.services/bin/ferretdb, $HOME/go/bin/ferretdb or PATH);
# otherwise builds FerretDB $FERRETDB_VERSION from the Go module proxy (minutes).
# Writes <repo>/.services/ferretdb.env (MONGO_URL).
# Stop: test/services/ferretdb.sh stop
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FERRETDB_PORT="${FERRETDB_PORT:-57017}"
FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.0}"   # v1.24.1 is not served by the module proxy
FDB_ROOT="$SERVICES_DIR/ferretdb"
PIDFILE="$FDB_ROOT/ferretdb.pid"
ENV_FILE="$SERVICES_DIR/ferretdb.env"
mkdir -p "$FDB_ROOT/data" "$FDB_ROOT/state"

write_env() { svc_write_env "$ENV_FILE" "MONGO_URL=mongodb://127.0.0.1:$FERRETDB_PORT/"; }

running_pid() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && cat "$PIDFILE"
}

if [ "${1:-start}" = "stop" ]; then
  if pid=$(running_pid); then kill "$pid"; fi
  rm -f "$PIDFILE"
  exit 0
fi

if running_pid >/dev/null && svc_port_open "$FERRETDB_PORT"; then
  write_env
  svc_log "FerretDB already running on 127.0.0.1:$FERRETDB_PORT (connection info: $ENV_FILE)"
  exit 0
fi
# One start (and build) at a time: run-all.sh and the exporter's tests, run beside it, both start FerretDB, and two
# builds in one directory remove each other's files ("getwd: no such file or directory").
exec 9>"$FDB_ROOT/.lock"
flock -w 900 9 || svc_die "another start of FerretDB holds $FDB_ROOT/.lock for over 15 minutes"
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
nohup "$BIN" --handler=sqlite --sqlite-url="file:$FDB_ROOT/data/" --state-dir="$FDB_ROOT/state" \
  --listen-addr="127.0.0.1:$FERRETDB_PORT" --debug-addr=- --telemetry=disable --log-level=warn \
  >"$LOG" 2>&1 </dev/null 9>&- &
echo $! >"$PIDFILE"
if ! svc_wait_port "$FERRETDB_PORT" 30; then
  tail -20 "$LOG" >&2 || true
  svc_die "FerretDB did not start, see $LOG"
fi
write_env
svc_log "FerretDB $("$BIN" --version 2>/dev/null | head -1 | sed 's/version: //') (SQLite backend) listening on 127.0.0.1:$FERRETDB_PORT, data $FDB_ROOT/data (connection info: $ENV_FILE)"
