#!/usr/bin/env bash
# Runs every test suite, then prints one closing line 'N passed, M failed' over all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
passed=0 failed=0 status=0

# TEST_TIMELINE=1: the schedule on stderr (and in $out/timeline.txt), for tuning it: when each service start and each
# run starts and ends (seconds since this script started), and each run's wall and CPU seconds (its processes and
# their children, GNU time); at the end the CPU seconds of the servers started in the background.
t0=$EPOCHREALTIME
exec 8>&2
stamp() {
  [ -n "${TEST_TIMELINE:-}" ] || return 0
  local us=$((${EPOCHREALTIME/./} - ${t0/./}))
  printf '[timeline] %4d.%d s  %s\n' $((us / 1000000)) $((us % 1000000 / 100000)) "$*" | tee -a "$out/timeline.txt" >&8
}
# timed NAME COMMAND...: runs the command; under TEST_TIMELINE, between two stamps and measured.
timed() {
  local name=$1 rc=0
  shift
  if [ -z "${TEST_TIMELINE:-}" ] || [ ! -x /usr/bin/time ]; then
    "$@"
    return
  fi
  stamp "$name: start"
  /usr/bin/time -f '%e %U %S' -o "$out/$name.time" "$@" || rc=$?
  read -r wall user sys < <(tail -n 1 "$out/$name.time")
  stamp "$name: end (rc $rc), $wall s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') CPU-s"
  return "$rc"
}

# The tests are JavaScript (dist/test): no TypeScript loader in each test process (test/helpers/js-tests.mjs says why).
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import=$PWD/test/helpers/js-tests.mjs"

# QuestDB (the temporal API tests on --troe tsdb, *.tsdb.test.ts: its JVM starts in seconds) and the pymodbus device
# (a pip install on a fresh clone) start in the background while tap runs: the files that need them run the same
# scripts (test/api/helpers/troe.ts, modbus-device.ts), which wait on these starts' locks and find them running.
timed questdb bash test/services/questdb.sh >"$out/questdb.txt" 2>&1 &
questdb=$!
timed pymodbus bash test/services/pymodbus.sh >"$out/pymodbus.txt" 2>&1 &
pymodbus=$!
# docdb's tests (its contract suite, the API files below) need the MongoDB-wire server: started, or found running.
timed ferretdb bash test/services/ferretdb.sh || status=1
# The Orion-LD exporter (Python) against PostgreSQL and FerretDB: it mostly waits on its servers, so it runs beside
# tap; its output is shown after tap's. Started after FerretDB is up: the exporter's run stops a server it found not
# running when it ends, and so stopped FerretDB under the docdb tests when it got there first.
exporter=""
if [ -x test/integration/exporter/run.sh ]; then
  timed exporter bash test/integration/exporter/run.sh >"$out/pytest.txt" 2>&1 &
  exporter=$!
fi
# Mosquitto for the MQTT bridge and notification tests (test/services/mosquitto.sh: idempotent, loopback only; in the
# foreground, as its script takes no lock against a test's start of it).
timed mosquitto bash test/services/mosquitto.sh || status=1

# tap: unit, api (brokers in the test process, or spawned where a test needs a process), integration; the tests as
# compiled by `make build-test` (test/helpers/compile-tests.js: dist/test/), not transpiled again in each test process.
T=dist/test
if [ ! -d "$T/unit" ]; then
  echo "run-all.sh: no $T/unit: run \`make build-test\` (or \`make test\`) first" >&2
  exit 1
fi
# The API files that touch the store, again on docdb (test/api/helpers/broker.ts storeArgs), in a tap run of their
# own beside the first: they mostly wait on FerretDB. Its output follows the first run's.
DOCDB_API=($T/api/entities.*.test.js $T/api/query*.test.js $T/api/batch.test.js $T/api/tenants.test.js
  $T/api/discovery.test.js $T/api/purge.test.js $T/api/subscriptions*.test.js $T/api/registrations*.test.js
  $T/api/linked.test.js $T/api/contexts.test.js $T/api/policyapi.test.js)
TEST_STORE=docdb timed docdb npx tap --reporter=tap "${DOCDB_API[@]}" >"$out/docdb.txt" 2>&1 &
docdb=$!
# The files that mostly wait (on devices, servers, spawned brokers' starts, timers: wall time several times their CPU
# time, measured per file with user+sys of the test process and its children) in a tap run of their own beside the
# first, two at a time: in the first run's two jobs each held a core for up to a minute while using a fraction of it.
# At two their walls add up to about the first run's share; a third job only stretched every file of the three runs
# (at a load of 30, five of these passed tap's 120 s timeout). Their output follows the docdb pass's.
WAITING=(api/bridge-modbus api/bridge-mqtt api/auth-contract api/tune-short api/bench-smoke api/distributed.docdb-set
  api/docdb-set api/contexts.slow-fetch api/auth-dsec-every-request api/auth-dsec api/websocket
  api/csource-subscriptions api/bridge-modbus-writes unit/docdb-store unit/store-contract/docdb api/docdb-faults)
WAITING=("${WAITING[@]/#/$T/}")
WAITING=("${WAITING[@]/%/.test.js}")
timed waiting npx tap --reporter=tap --jobs 2 "${WAITING[@]}" >"$out/waiting.txt" 2>&1 &
waiting=$!
# The rest: every test file of unit, api and integration but those (tap's own selection: .taprc excludes helpers/ and
# fixtures/), and but the files run in bundles (several files in one tap process: test/helpers/bundle.ts), the bundles
# instead: their members are listed in $T/bundles/members.txt.
mapfile -t REST < <( (find "$T/unit" "$T/api" "$T/integration" -name '*.test.js' -not -path '*/helpers/*' \
  -not -path '*/fixtures/*' | grep -vxF -f <(printf '%s\n' "${WAITING[@]}") -f "$T/bundles/members.txt"
  find "$T/bundles" -name '*.test.js') | sort)
timed main npx tap --reporter=tap "${REST[@]}" 2>&1 | tee "$out/tap.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
wait "$docdb" || status=1
cat "$out/docdb.txt" | tee -a "$out/tap.txt"
wait "$waiting" || status=1
cat "$out/waiting.txt" | tee -a "$out/tap.txt"
for svc in questdb pymodbus; do
  wait "${!svc}" || status=1
  cat "$out/$svc.txt" >&2
done
# Count the named tests of each file: the test points one level below the file wrappers (indented 4 spaces); in a
# bundle (dist/test/bundles/), one level below its files' subtests (8 spaces).
read -r p f < <(awk '/^# Subtest: / { b = ($0 ~ /\/bundles\//) }
  b && /^        ok [0-9]+ / || !b && /^    ok [0-9]+ / { p++ }
  b && /^        not ok [0-9]+ / || !b && /^    not ok [0-9]+ / { f++ }
  END { print p + 0, f + 0 }' "$out/tap.txt")
passed=$((passed + p)); failed=$((failed + f))

if [ -n "$exporter" ]; then
  wait "$exporter" || status=1
  cat "$out/pytest.txt"
  line=$(grep -E '^=+ .*(passed|failed).* in [0-9.]+s' "$out/pytest.txt" | tail -n 1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || true)
  f=0
  for n in $(grep -oE '[0-9]+ (failed|errors?)' <<<"$line" | grep -oE '[0-9]+' || true); do f=$((f + n)); done
  passed=$((passed + ${p:-0})); failed=$((failed + f))
fi

if [ -n "${TEST_TIMELINE:-}" ]; then
  # The servers' own CPU seconds so far (a server found running counts from its start): PostgreSQL with its backends.
  for pidfile in .services/*/*.pid .services/*.pid .services/postgres/data/postmaster.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(head -n 1 "$pidfile")
    kill -0 "$pid" 2>/dev/null || continue
    s=$(ps -o times= -p "$pid" --ppid "$pid" | awk '{ s += $1 } END { print s + 0 }')
    stamp "server $(basename "$(dirname "$pidfile")")/$(basename "$pidfile" .pid): $s CPU-s"
  done
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
exit "$status"
