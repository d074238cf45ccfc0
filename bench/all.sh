#!/usr/bin/env bash
# `make bench`: every benchmark in turn, sized to finish within 20 minutes on the 2-core machine (issue 24): the
# main table in alternated rounds of 3 s, the others with their rows shortened (`--duration 3`) and their largest
# data sets cut (temporal-tsdb 1,000,000 instances, the import 200 MB); `make bench-long` runs those two at full size.
# Prints the estimated total first and, after each step, its time and what is left. Every step runs even when one
# fails; the exit status is 1 when any did. BENCH_BASELINE=<dir> adds the defaults of the broker built in that
# checkout (an older commit) to the main table's rounds: an A/B of what changed (run.js --baseline).
set -uo pipefail
cd "$(dirname "$0")/.."

# name | estimated minutes | command
STEPS=(
  "FerretDB (import)|0.3|bash test/services/ferretdb.sh"
  "FerretDB on PostgreSQL (docdb-pg-pool rows)|0.2|env FERRETDB_BACKEND=pg bash test/services/ferretdb.sh"
  "main table (run.js)|6|node dist/bench/run.js${BENCH_BASELINE:+ --baseline $BENCH_BASELINE}"
  "docdb on FerretDB on PostgreSQL (run.js --docdb)|0.8|node dist/bench/run.js --docdb --rounds 1 --duration 2 --warmup 0.5"
  "query by type in process (query-store.js)|1.5|node dist/bench/query-store.js"
  "auth (auth.js)|0.5|node dist/bench/auth.js --duration 3"
  "auth on the entity (auth-ngsild.js)|1|node dist/bench/auth-ngsild.js --duration 3"
  "temporal (temporal.js)|2.5|node dist/bench/temporal.js --duration 3"
  "temporal on QuestDB (temporal-tsdb.js)|1.5|node dist/bench/temporal-tsdb.js --duration 3 --instances 1000000"
  "WebSocket (websocket.js)|0.5|node dist/bench/websocket.js --duration 3"
  "distributed retrieve (distributed.js)|0.3|node dist/bench/distributed.js --duration 3"
  "subscriptions (subscriptions.js)|2|node dist/bench/scenarios/subscriptions.js --duration 3"
  "owner notifications (owner-notifications.js)|0.5|node dist/bench/scenarios/owner-notifications.js --duration 3"
  "MQTT bridge (bridge-mqtt.js)|1|node dist/bench/scenarios/bridge-mqtt.js --duration 3"
  "Modbus bridge (bridge-modbus.js)|0.5|node dist/bench/scenarios/bridge-modbus.js --duration 3"
  "import (import.js)|1|node dist/bench/import.js --bytes 200000000"
)
if [ "${1:-}" = "--long" ]; then
  STEPS=(
    "temporal on QuestDB, 10,000,000 instances (temporal-tsdb.js)|8|node dist/bench/temporal-tsdb.js"
    "FerretDB (import)|0.3|bash test/services/ferretdb.sh"
    "import, 1 GB (import.js)|6|node dist/bench/import.js"
  )
fi

total=0
for step in "${STEPS[@]}"; do total=$(awk -v a="$total" -v b="$(cut -d'|' -f2 <<<"$step")" 'BEGIN { print a + b }'); done
echo "bench: ${#STEPS[@]} steps, estimated ${total} min; load average at start $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
start=$(date +%s)
left=$total
failed=()
own_mongo="${MONGO_URL:-}"
own_mongo_pg="${MONGO_PG_URL:-}"
for step in "${STEPS[@]}"; do
  IFS='|' read -r name estimate command <<<"$step"
  echo "== ${name} (about ${estimate} min; about ${left} min left in all)"
  t0=$(date +%s)
  # shellcheck disable=SC2086 # the command is words on purpose
  if ! $command; then failed+=("$name"); fi
  # FerretDB's addresses for what follows (import.js reads MONGO_URL, the docdb-pg-pool variant MONGO_PG_URL and
  # FERRETDB_POSTGRESQL_URL), read again after each step: the FerretDB steps write them, and a file left by an earlier
  # start on another port must not be taken first. Addresses the caller set are kept.
  if [ -z "$own_mongo" ] && [ -f .services/ferretdb.env ]; then
    # shellcheck disable=SC1091 # written by test/services/ferretdb.sh
    . .services/ferretdb.env
  fi
  if [ -z "$own_mongo_pg" ] && [ -f .services/ferretdb-pg.env ]; then
    # shellcheck disable=SC1091 # written by FERRETDB_BACKEND=pg test/services/ferretdb.sh
    . .services/ferretdb-pg.env
  fi
  left=$(awk -v a="$left" -v b="$estimate" 'BEGIN { x = a - b; print (x < 0 ? 0 : x) }')
  echo "== ${name}: $(( $(date +%s) - t0 )) s; $(( ($(date +%s) - start) / 60 )) min since the start"
done
elapsed=$(( $(date +%s) - start ))
echo "bench: ${elapsed} s in all ($(awk -v s="$elapsed" 'BEGIN { printf "%.1f", s / 60 }') min, estimated ${total}); load average at end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
# The issue's targets in one place: the default broker's rows of the main table, then the other sections' lines.
echo "bench: targets (bench/RESULTS.md)"
awk -F' [|] ' '/^<!-- / { exit } /^[|] [a-z-]+ [|] uws-pool [|]/ { print "  " $1 " " $NF }' bench/RESULTS.md | sed 's/^  | /  /; s/ |$//'
grep -E '^Target[ :]' bench/RESULTS.md | sed 's/^/  /'
if [ "${1:-}" != "--long" ] && [ "$elapsed" -gt 1200 ]; then echo "bench: over the 20-minute budget of make bench: cut rows or durations"; fi
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'bench: failed: %s\n' "${failed[@]}"
  exit 1
fi
