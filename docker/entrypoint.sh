#!/bin/sh
# The image's entry point (seed 001 §4.4): applies the tuned values recorded at build time (/app/tune.env, written
# by tune/record.ts) through the environment, unless the operator set the same variable at run time, then runs the
# broker. TUNE_DBLOCKPREFER -> BROKER_DBLOCKPREFER; TUNE_ALLOCATOR -> LD_PRELOAD (an LD_PRELOAD the operator sets,
# even empty, wins: empty selects the system allocator); the trained options -> BROKER_CONNECTIONPOOLSIZE,
# BROKER_HTTPSERVER and NODE_OPTIONS (the heap sizes).
# Arguments: none or options (`--dbDir /data`): the broker with them; a command (`ldbroker-import --file ...`): it.
# TUNE_DRY_RUN=1 prints the environment and command it would exec instead (the tests read it).
set -eu

TUNE_FILE="${TUNE_FILE:-/app/tune.env}"
if [ -f "$TUNE_FILE" ]; then
  # shellcheck disable=SC1090
  . "$TUNE_FILE"
fi

# apply NAME VALUE: exports NAME=VALUE unless NAME is already set (to anything, empty included) or VALUE is empty.
apply() {
  eval "isset=\${$1+x}"
  if [ -z "$isset" ] && [ -n "$2" ]; then export "$1=$2"; fi
}
apply BROKER_DBLOCKPREFER "${TUNE_DBLOCKPREFER:-}"
apply BROKER_CONNECTIONPOOLSIZE "${TUNE_CONNECTIONPOOLSIZE:-}"
apply BROKER_HTTPSERVER "${TUNE_HTTPSERVER:-}"
apply NODE_OPTIONS "${TUNE_NODE_OPTIONS:-}"

# The allocator's library, found where Debian's package puts it (the multiarch directory of this machine).
library() {
  for f in /usr/lib/*-linux-gnu/$1 /usr/lib/$1; do
    if [ -f "$f" ]; then echo "$f"; return 0; fi
  done
  return 1
}
lib=""
case "${TUNE_ALLOCATOR:-system}" in
  jemalloc) lib=$(library 'libjemalloc.so.2') || echo "entrypoint: jemalloc recorded but libjemalloc.so.2 missing: system allocator" >&2 ;;
  mimalloc) lib=$(library 'libmimalloc.so.2') || echo "entrypoint: mimalloc recorded but libmimalloc.so.2 missing: system allocator" >&2 ;;
esac
apply LD_PRELOAD "$lib"

if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then
  set -- node /app/dist/src/main.js "$@"
fi

if [ "${TUNE_DRY_RUN:-}" = "1" ]; then
  for v in BROKER_DBLOCKPREFER BROKER_CONNECTIONPOOLSIZE BROKER_HTTPSERVER NODE_OPTIONS LD_PRELOAD; do
    eval "isset=\${$v+x}; val=\${$v-}"
    if [ -n "$isset" ]; then echo "$v=$val"; else echo "$v unset"; fi
  done
  printf 'exec'
  printf ' %s' "$@"
  printf '\n'
  exit 0
fi
exec "$@"
