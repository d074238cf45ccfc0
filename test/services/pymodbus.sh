#!/usr/bin/env bash
# Starts a Modbus TCP device for the Modbus bridge's tests and bench (seed 001 §2.4): test/services/modbus-device.py
# on pymodbus (PyPI, pinned in test/services/pymodbus-requirements.txt), an implementation independent of the
# bridge's client, as a process of its own on 127.0.0.1:
#   ${MODBUS_PORT:-55020}          Modbus TCP, units 1 and 2
#   ${MODBUS_CONTROL_PORT:-55021}  its control port (set and read registers, slow answers, faults: see the script)
# Idempotent: already running -> nothing to do. Installs pymodbus into <repo>/.services/pymodbus-venv when missing.
# Writes <repo>/.services/pymodbus.env (MODBUS_PORT, MODBUS_CONTROL_PORT, MODBUS_PYTHON, MODBUS_DEVICE); the tests
# start devices of their own with MODBUS_PYTHON and MODBUS_DEVICE (stopped, restarted, made slow) on free ports.
# Install only (the tests: no fixed port): test/services/pymodbus.sh install
# Stop: test/services/pymodbus.sh stop
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODBUS_PORT="${MODBUS_PORT:-55020}"
MODBUS_CONTROL_PORT="${MODBUS_CONTROL_PORT:-55021}"
VENV="$SERVICES_DIR/pymodbus-venv"
REQ="$SERVICES_REPO/test/services/pymodbus-requirements.txt"
DEVICE="$SERVICES_REPO/test/services/modbus-device.py"
PIDFILE="$SERVICES_DIR/pymodbus.pid"
ENV_FILE="$SERVICES_DIR/pymodbus.env"
LOG="$SERVICES_DIR/logs/pymodbus.log"

write_env() {
  svc_write_env "$ENV_FILE" "MODBUS_PORT=$MODBUS_PORT" "MODBUS_CONTROL_PORT=$MODBUS_CONTROL_PORT" \
    "MODBUS_PYTHON=$VENV/bin/python" "MODBUS_DEVICE=$DEVICE"
}

running_pid() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && cat "$PIDFILE"
}

if [ "${1:-start}" = "stop" ]; then
  if pid=$(running_pid); then kill "$pid"; fi
  rm -f "$PIDFILE"
  exit 0
fi

# One run at a time (test files call it concurrently): a second waits for the first's install and start.
exec 9>"$SERVICES_DIR/pymodbus.lock"
flock 9

# The virtual environment with the pinned pymodbus (again when the pin changes).
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian's python3 needs python3-venv for ensurepip
    svc_apt_install python3-venv
    rm -rf "$VENV"
    python3 -m venv "$VENV"
  fi
fi
STAMP="$VENV/.pymodbus-requirements"
if ! cmp -s "$REQ" "$STAMP"; then
  svc_log "installing $(tr '\n' ' ' <"$REQ")into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ" >"$SERVICES_DIR/logs/pymodbus-pip.log" 2>&1 \
    || svc_die "pip install failed, see $SERVICES_DIR/logs/pymodbus-pip.log"
  cp "$REQ" "$STAMP"
fi
if [ "${1:-start}" = "install" ]; then
  write_env
  exit 0
fi

# A device started from an older modbus-device.py is restarted: the tests and the bench speak the current one.
SCRIPT_STAMP="$SERVICES_DIR/pymodbus.script"
if pid=$(running_pid) && ! cmp -s "$DEVICE" "$SCRIPT_STAMP"; then
  svc_log "modbus-device.py changed: restarting the device"
  kill "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$PIDFILE"
fi

if running_pid >/dev/null && svc_port_open "$MODBUS_PORT" && svc_port_open "$MODBUS_CONTROL_PORT"; then
  write_env
  svc_log "Modbus device already running on 127.0.0.1:$MODBUS_PORT (control $MODBUS_CONTROL_PORT; connection info: $ENV_FILE)"
  exit 0
fi
for p in "$MODBUS_PORT" "$MODBUS_CONTROL_PORT"; do
  svc_port_open "$p" && svc_die "port $p is taken by another program"
done

# The device does not inherit the lock (fd 9): it would hold it as long as it runs.
nohup "$VENV/bin/python" "$DEVICE" --port "$MODBUS_PORT" --control "$MODBUS_CONTROL_PORT" >"$LOG" 2>&1 </dev/null 9>&- &
echo $! >"$PIDFILE"
cp "$DEVICE" "$SCRIPT_STAMP"
for p in "$MODBUS_PORT" "$MODBUS_CONTROL_PORT"; do
  if ! svc_wait_port "$p" 20; then
    tail -20 "$LOG" >&2 || true
    svc_die "the Modbus device did not start, see $LOG"
  fi
done
write_env
svc_log "Modbus device (pymodbus $("$VENV/bin/python" -c 'import pymodbus; print(pymodbus.__version__)')) listening on 127.0.0.1:$MODBUS_PORT (control $MODBUS_CONTROL_PORT; connection info: $ENV_FILE)"
