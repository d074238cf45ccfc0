#!/usr/bin/env bash
# Starts Mosquitto (the Debian package) for the MQTT tests (seed 001 §5), as a process of its own on 127.0.0.1:
#   ${MQTT_PORT:-51883}       plain, anonymous
#   ${MQTT_AUTH_PORT:-51884}  user/password only (user ${MQTT_USER:-ldbroker}, password ${MQTT_PASSWORD:-ldbroker-secret})
#   ${MQTTS_PORT:-58883}      TLS with a self-signed certificate made here with openssl (CN 127.0.0.1), anonymous
# Idempotent: already running -> nothing to do. Installs the package mosquitto when missing (as root).
# Writes <repo>/.services/mosquitto.env (MQTT_URL, MQTT_AUTH_URL, MQTTS_URL, MQTT_USER, MQTT_PASSWORD, MQTT_CA).
# Stop: test/services/mosquitto.sh stop
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MQTT_PORT="${MQTT_PORT:-51883}"
MQTT_AUTH_PORT="${MQTT_AUTH_PORT:-51884}"
MQTTS_PORT="${MQTTS_PORT:-58883}"
MQTT_USER="${MQTT_USER:-ldbroker}"
MQTT_PASSWORD="${MQTT_PASSWORD:-ldbroker-secret}"
MQ_ROOT="$SERVICES_DIR/mosquitto"
PIDFILE="$MQ_ROOT/mosquitto.pid"
ENV_FILE="$SERVICES_DIR/mosquitto.env"
CONF="$MQ_ROOT/mosquitto.conf"

write_env() {
  svc_write_env "$ENV_FILE" "MQTT_URL=mqtt://127.0.0.1:$MQTT_PORT" "MQTT_AUTH_URL=mqtt://127.0.0.1:$MQTT_AUTH_PORT" \
    "MQTTS_URL=mqtts://127.0.0.1:$MQTTS_PORT" "MQTT_USER=$MQTT_USER" "MQTT_PASSWORD=$MQTT_PASSWORD" "MQTT_CA=$MQ_ROOT/server.crt"
}

running_pid() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && cat "$PIDFILE"
}

if [ "${1:-start}" = "stop" ]; then
  if pid=$(running_pid); then kill "$pid"; fi
  rm -f "$PIDFILE"
  exit 0
fi

if running_pid >/dev/null && svc_port_open "$MQTT_PORT" && svc_port_open "$MQTT_AUTH_PORT" && svc_port_open "$MQTTS_PORT"; then
  write_env
  svc_log "Mosquitto already running on 127.0.0.1:$MQTT_PORT/$MQTT_AUTH_PORT/$MQTTS_PORT (connection info: $ENV_FILE)"
  exit 0
fi
for p in "$MQTT_PORT" "$MQTT_AUTH_PORT" "$MQTTS_PORT"; do
  svc_port_open "$p" && svc_die "port $p is taken by another program"
done

svc_apt_install mosquitto
command -v openssl >/dev/null || svc_apt_install openssl
MOSQUITTO=/usr/sbin/mosquitto
[ -x "$MOSQUITTO" ] || svc_die "$MOSQUITTO not found"

mkdir -p "$MQ_ROOT"
# The TLS listener's self-signed certificate (the broker's tests accept it with --insecureNotif only).
if [ ! -f "$MQ_ROOT/server.crt" ] || [ ! -f "$MQ_ROOT/server.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$MQ_ROOT/server.key" -out "$MQ_ROOT/server.crt" \
    >"$SERVICES_DIR/logs/mosquitto-openssl.log" 2>&1 || svc_die "openssl failed, see $SERVICES_DIR/logs/mosquitto-openssl.log"
fi
rm -f "$MQ_ROOT/passwd"
touch "$MQ_ROOT/passwd"
mosquitto_passwd -b "$MQ_ROOT/passwd" "$MQTT_USER" "$MQTT_PASSWORD"
# As root, Mosquitto drops to the mosquitto user: it must read its files.
if [ "$(id -u)" -eq 0 ] && id mosquitto >/dev/null 2>&1; then chown -R mosquitto: "$MQ_ROOT"; fi
chmod 0700 "$MQ_ROOT"
chmod 0600 "$MQ_ROOT/server.key" "$MQ_ROOT/passwd"

cat >"$CONF" <<EOF
# Written by test/services/mosquitto.sh: loopback only, one listener per way a client authenticates.
per_listener_settings true
persistence false
log_dest stderr
log_type error
log_type warning
# Mosquitto holds 1000 QoS 1/2 messages per client past the 20 in flight, then drops the rest: a burst of samples
# faster than the bridge takes them (bench/scenarios/bridge-mqtt.ts publishes 20,000) would lose the newest.
max_queued_messages 100000

listener $MQTT_PORT 127.0.0.1
allow_anonymous true

listener $MQTT_AUTH_PORT 127.0.0.1
allow_anonymous false
password_file $MQ_ROOT/passwd

listener $MQTTS_PORT 127.0.0.1
allow_anonymous true
certfile $MQ_ROOT/server.crt
keyfile $MQ_ROOT/server.key
EOF

LOG="$MQ_ROOT/mosquitto.log"
nohup "$MOSQUITTO" -c "$CONF" >"$LOG" 2>&1 </dev/null &
echo $! >"$PIDFILE"
for p in "$MQTT_PORT" "$MQTT_AUTH_PORT" "$MQTTS_PORT"; do
  if ! svc_wait_port "$p" 20; then
    tail -20 "$LOG" >&2 || true
    svc_die "Mosquitto did not start, see $LOG"
  fi
done
write_env
svc_log "Mosquitto $("$MOSQUITTO" -h 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' || true) listening on 127.0.0.1:$MQTT_PORT (plain), $MQTT_AUTH_PORT (user/password), $MQTTS_PORT (TLS) (connection info: $ENV_FILE)"
