#!/usr/bin/env bash
# programs.sh — install the real programs the protocol tests drive, when missing (Debian packages):
#   prometheus       remote write / remote read / query API (test/e2e/protocols-prometheus.spec.ts)
#   influxdb-client  the influx 1.x CLI, line-protocol -import (test/e2e/protocols-influx.spec.ts)
#   carbon-c-relay   Graphite plaintext relay (test/e2e/protocols-graphite.spec.ts)
# Needs root (apt-get). Nothing is started: the tests start and stop each program themselves.
set -euo pipefail
SVC=programs
. "$(dirname "${BASH_SOURCE[0]}")/_lib.sh"

declare -A BINARY=([prometheus]=prometheus [influxdb-client]=influx [carbon-c-relay]=carbon-c-relay)
missing=()
for pkg in "${!BINARY[@]}"; do command -v "${BINARY[$pkg]}" >/dev/null || missing+=("$pkg"); done
[[ ${#missing[@]} -eq 0 ]] && exit 0

lock "$S4_BASE/.programs.lock"
log "installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; }
apt_install || { apt-get update -qq >/dev/null && apt_install; } || die "apt-get install ${missing[*]} failed"
# The Debian prometheus package may start its own daemon on :9090 where an init system runs;
# the tests use their own ports and configs, so it is left alone.
for pkg in "${missing[@]}"; do command -v "${BINARY[$pkg]}" >/dev/null || die "$pkg installed but ${BINARY[$pkg]} is not on PATH"; done
log "installed ${missing[*]}"
