#!/usr/bin/env bash
# The browser the console's test drives (test/e2e/console.spec.ts): Debian's chromium package.
# Idempotent: does nothing when it is installed. Root or passwordless sudo installs it.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
echo "[chromium] installing Debian's chromium for the console's browser test" >&2
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version >&2
