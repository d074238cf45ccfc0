# Shared helpers of the test services scripts (sourced, not run).
# Everything listens on 127.0.0.1 only; state lives under <repo>/.services/.

SERVICES_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SERVICES_DIR="${SERVICES_DIR:-$SERVICES_REPO/.services}"
mkdir -p "$SERVICES_DIR/logs" "$SERVICES_DIR/bin"

svc_log() { echo "[services] $*" >&2; }
svc_die() { echo "[services] error: $*" >&2; exit 1; }

# svc_port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT
svc_port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# svc_wait_port PORT SECONDS: wait until the port accepts connections
svc_wait_port() {
  local port=$1 secs=$2 i
  for ((i = 0; i < secs * 5; i++)); do
    svc_port_open "$port" && return 0
    sleep 0.2
  done
  return 1
}

# svc_apt_install PKG...: install the Debian packages that are missing
svc_apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || svc_die "missing packages ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root"
  svc_log "installing ${missing[*]} (apt)"
  if [ ! -f "$SERVICES_DIR/.apt-updated" ]; then
    apt-get update -qq >"$SERVICES_DIR/logs/apt-update.log" 2>&1 || svc_die "apt-get update failed, see $SERVICES_DIR/logs/apt-update.log"
    touch "$SERVICES_DIR/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >"$SERVICES_DIR/logs/apt-install.log" 2>&1 \
    || svc_die "apt-get install ${missing[*]} failed, see $SERVICES_DIR/logs/apt-install.log"
}

# svc_write_env FILE KEY=VALUE...: the connection info other scripts source
svc_write_env() {
  local file=$1; shift
  : >"$file.tmp"
  local kv
  for kv in "$@"; do printf 'export %s\n' "$kv" >>"$file.tmp"; done
  mv "$file.tmp" "$file"
}
