#!/usr/bin/env bash
# Starts QuestDB (the `--troe tsdb` history's server) for the tests, on 127.0.0.1 only: HTTP (SQL /exec and ILP over
# HTTP) on ${QDB_HTTP_PORT:-59000}, PostgreSQL wire on ${QDB_PG_PORT:-58812}, ILP over TCP on ${QDB_ILP_PORT:-59009}.
# Idempotent: already running -> nothing to do. The server is the jar org.questdb:questdb:$QDB_VERSION from Maven
# Central, fetched once by mvn into the local repository (~/.m2) and run with Java 17 (`java` on PATH).
# Data under <repo>/.services/questdb. Writes <repo>/.services/questdb.env (QDB_HOST, QDB_HTTP_PORT, QDB_PG_PORT).
# QDB_PROFILE: `test` (the default) runs a small server for the test suite on a shared 2-core machine (below);
# `full` runs QuestDB as a deployment would, the JVM's defaults and two shared workers spinning for work, for the
# benchmarks (bench/temporal-tsdb.ts): a server of the other profile found running is restarted with this one.
# Stop: test/services/questdb.sh stop
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QDB_VERSION="${QDB_VERSION:-9.3.4}"
QDB_HTTP_PORT="${QDB_HTTP_PORT:-59000}"
QDB_PG_PORT="${QDB_PG_PORT:-58812}"
QDB_ILP_PORT="${QDB_ILP_PORT:-59009}"
QDB_ROOT="$SERVICES_DIR/questdb"
PIDFILE="$QDB_ROOT/questdb.pid"
ENV_FILE="$SERVICES_DIR/questdb.env"
LOG="$SERVICES_DIR/logs/questdb.log"
QDB_PROFILE="${QDB_PROFILE:-test}"
case "$QDB_PROFILE" in test | full) ;; *) svc_die "QDB_PROFILE must be test or full, not '$QDB_PROFILE'" ;; esac
PROFILE_FILE="$QDB_ROOT/profile"
mkdir -p "$QDB_ROOT/conf"

write_env() {
  svc_write_env "$ENV_FILE" "QDB_HOST=127.0.0.1" "QDB_HTTP_PORT=$QDB_HTTP_PORT" "QDB_PG_PORT=$QDB_PG_PORT"
}

running_pid() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && cat "$PIDFILE"
}

# Answers SQL on the HTTP port: the server is up (not merely listening while it starts).
ready() {
  curl -fsS --max-time 2 "http://127.0.0.1:$QDB_HTTP_PORT/exec?query=select%201" >/dev/null 2>&1
}

stop_running() {
  local pid
  if pid=$(running_pid); then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  rm -f "$PIDFILE"
}

if [ "${1:-start}" = "stop" ]; then
  stop_running
  exit 0
fi

# One start at a time: test files that need QuestDB each run this script, several at once.
exec 9>"$QDB_ROOT/.lock"
flock -w 120 9 || svc_die "another start of QuestDB holds $QDB_ROOT/.lock for over 120 s"

if running_pid >/dev/null && ready; then
  if [ "$(cat "$PROFILE_FILE" 2>/dev/null || echo test)" = "$QDB_PROFILE" ]; then
    write_env
    svc_log "QuestDB already running on 127.0.0.1:$QDB_HTTP_PORT (connection info: $ENV_FILE)"
    exit 0
  fi
  svc_log "QuestDB running with another profile than '$QDB_PROFILE': restarting it"
  stop_running
fi
for p in "$QDB_HTTP_PORT" "$QDB_PG_PORT" "$QDB_ILP_PORT"; do
  svc_port_open "$p" && svc_die "port $p is taken by another program"
done

command -v java >/dev/null || svc_die "no java on PATH (QuestDB needs Java 17 or later)"
JAR="$HOME/.m2/repository/org/questdb/questdb/$QDB_VERSION/questdb-$QDB_VERSION.jar"
if [ ! -f "$JAR" ]; then
  command -v mvn >/dev/null || svc_die "no $JAR and no mvn to fetch it from Maven Central"
  svc_log "fetching org.questdb:questdb:$QDB_VERSION from Maven Central"
  mvn -q -B dependency:get -Dartifact="org.questdb:questdb:$QDB_VERSION" -Dtransitive=false \
    >"$SERVICES_DIR/logs/questdb-fetch.log" 2>&1 || svc_die "mvn could not fetch QuestDB, see $SERVICES_DIR/logs/questdb-fetch.log"
  [ -f "$JAR" ] || svc_die "mvn fetched QuestDB but $JAR is not there"
fi

# Every listener on loopback; the UDP line protocol and the minimal health server off, no telemetry. Small WAL
# apply and commit lags keep a test's read close behind its write. The test profile is a small server: one thread
# in each shared pool (network, query, write), and idle workers that go to sleep after a few empty turns instead of
# thousands (they spun on the 2 cores the tests share); in a tsdb test run it used half the CPU of the full one.
cat >"$QDB_ROOT/conf/server.conf" <<CONF
http.net.bind.to=127.0.0.1:$QDB_HTTP_PORT
pg.net.bind.to=127.0.0.1:$QDB_PG_PORT
line.tcp.net.bind.to=127.0.0.1:$QDB_ILP_PORT
line.udp.enabled=false
http.min.enabled=false
telemetry.enabled=false
CONF
if [ "$QDB_PROFILE" = test ]; then
  cat >>"$QDB_ROOT/conf/server.conf" <<CONF
shared.worker.count=1
shared.worker.yield.threshold=10
shared.worker.nap.threshold=100
shared.worker.sleep.threshold=1000
wal.apply.worker.yield.threshold=10
wal.apply.worker.nap.threshold=100
wal.apply.worker.sleep.threshold=1000
CONF
  # The JVM of a small test server: C1 only (C2's compiles were most of its CPU in a test run), one compiler
  # thread, the serial collector (no GC threads per core).
  JVM_OPTS="-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"
else
  echo "shared.worker.count=2" >>"$QDB_ROOT/conf/server.conf"
  JVM_OPTS=""
fi

svc_log "starting QuestDB $QDB_VERSION, profile $QDB_PROFILE (log $LOG)"
# setsid: the server outlives this script and the test run that started it, like the other services.
# 9>&-: the server must not inherit the start lock, or it holds it for its whole life and every later run of this
# script waits on flock forever (every *.tsdb test timed out so).
echo "$QDB_PROFILE" >"$PROFILE_FILE"
# shellcheck disable=SC2086 # the options are words
setsid java ${QDB_JAVA_OPTS:-$JVM_OPTS} -Xms128m -Xmx1g -p "$JAR" -m io.questdb/io.questdb.ServerMain -d "$QDB_ROOT" >"$LOG" 2>&1 </dev/null 9>&- &
echo $! >"$PIDFILE"
for _ in $(seq 1 300); do
  ready && break
  kill -0 "$(cat "$PIDFILE")" 2>/dev/null || { tail -20 "$LOG" >&2 || true; svc_die "QuestDB exited, see $LOG"; }
  sleep 0.2
done
ready || { tail -20 "$LOG" >&2 || true; svc_die "QuestDB not ready on port $QDB_HTTP_PORT after 60 s, see $LOG"; }
write_env
svc_log "QuestDB $QDB_VERSION listening on 127.0.0.1:$QDB_HTTP_PORT (HTTP), $QDB_PG_PORT (PG wire), data $QDB_ROOT (connection info: $ENV_FILE)"
