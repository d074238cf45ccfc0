#!/usr/bin/env bash
# `make conformance`: runs the ETSI NGSI-LD test suite (ETSI ISG CIM, Robot Framework) against a broker built from
# this tree and prints the per-folder table and the line 'N passed, M failed'. Fetches nothing: the suite's
# checkout is given as ETSI_SUITE (see conformance/README.md). A fresh broker (RAM store, --troe embdb, 10 temporal
# instances per attribute before paging) is started for every top-level folder, as the suite's teardowns leave
# temporal history behind.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ETSI_SUITE:?set ETSI_SUITE to a checkout of the ETSI NGSI-LD test suite (conformance/README.md)}"
PORT=${ETSI_BROKER_PORT:-1026}
OUT=${ETSI_OUT:-$PWD/.conformance}
# The suite's temporal paging tests (020_13, 020_14, 021_15, 021_16) assume a broker that pages two attributes of 20
# instances each and not two of 5 (the suite's README): a cap of 10 instances per attribute does both.
ARGS=${ETSI_BROKER_ARGS:---troe embdb --temporalInstanceCap 10}
mkdir -p "$OUT"
pidfile="$OUT/broker.pid"

stop_broker() {
  if [[ -f $pidfile ]]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 0.1; done
    rm -f "$pidfile"
  fi
}
start_broker() {
  stop_broker
  # shellcheck disable=SC2086
  node dist/src/main.js --port "$PORT" --host 127.0.0.1 --logLevel warn $ARGS >> "$OUT/broker.log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$PORT/ngsi-ld/v1/types" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "conformance: the broker did not start (log: $OUT/broker.log)" >&2
  return 1
}
trap stop_broker EXIT
export -f start_broker stop_broker
export PORT OUT ARGS pidfile

start_broker
SUITE_DIR=$ETSI_SUITE BROKER_URL="http://127.0.0.1:$PORT/ngsi-ld/v1" ETSI_OUT="$OUT/results" \
  ETSI_BEFORE_FOLDER=start_broker ETSI_ALLOW_FAILURES=1 bash conformance/run-etsi.sh "$@"
