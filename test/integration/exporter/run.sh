#!/usr/bin/env bash
# Runs the Orion-LD exporter's tests against real servers:
#   - a virtual environment at <repo>/.venv with src/migrate/exporters/orionld/requirements.txt
#   - PostgreSQL 15 + PostGIS (test/services/postgres.sh) and FerretDB, a MongoDB-wire server
#     (test/services/ferretdb.sh), both on 127.0.0.1, started only when not running
#   - pytest on test/integration/exporter and the stream contract's unit tests (test/unit/stream-contract), two
#     processes, which load the fixtures of test/fixtures/orionld once (conftest.py)
# A server this run started is stopped when it ends (whatever the outcome): a server left running from one
# checkout holds its fixed port and the next checkout's run cannot start its own. Servers already running are kept.
# Ends with pytest's summary; exit status non-zero on any failure.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$REPO"
. test/services/lib.sh

VENV="$REPO/.venv"
REQ="src/migrate/exporters/orionld/requirements.txt"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian's python3 needs python3-venv for ensurepip
    svc_apt_install python3-venv
    rm -rf "$VENV"
    python3 -m venv "$VENV"
  fi
fi
STAMP="$VENV/.orionld-exporter-requirements"
if ! cmp -s "$REQ" "$STAMP"; then
  svc_log "installing $REQ into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$STAMP"
fi

stop_later=()
stop_started() { for svc in "${stop_later[@]}"; do bash "test/services/$svc.sh" stop >/dev/null 2>&1 || true; done; }
trap stop_started EXIT
svc_port_open "${PG_PORT:-55432}" || stop_later+=(postgres)
svc_port_open "${FERRETDB_PORT:-57017}" || stop_later+=(ferretdb)
bash test/services/postgres.sh
bash test/services/ferretdb.sh

# Two processes (pytest-xdist), a file's tests in one (its module fixtures run once): the tests mostly wait on the
# exporter's and the servers' starts and answers. The fixtures are loaded once, by the first (conftest.py, loaded).
"$VENV/bin/python" -m pytest -p no:cacheprovider -rs -n 2 --dist loadfile test/integration/exporter \
  test/unit/stream-contract "$@"
