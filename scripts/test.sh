#!/usr/bin/env bash
# The whole test suite: build, start the real servers the suites need (installing them the
# first time), run unit, contract and end-to-end suites plus the infrastructure tests, then stop
# the servers this run started (servers that were already running are left running).
# Usage: npm test [-- vitest filters]
set -euo pipefail
cd "$(dirname "$0")/.."

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<22||(a===22&&b<12)) { console.error(`Node ${process.version} is too old: S4 needs >= 22.12 (npm install -g node@24)`); process.exit(1) }'

npm run build --silent
npm run typecheck --silent   # every package and every test, SDK type tests included
npm run lint --silent

# The real programs the protocol tests drive (prometheus, influx CLI, carbon-c-relay).
scripts/services/programs.sh

started=()
scratch=""
stop() {
  local rc=$?
  for s in "${started[@]}"; do scripts/services/$s.sh stop || true; done
  # The suites' temporary data dirs: gone after a green run, kept for a look after a red one.
  if [ -n "$scratch" ]; then
    if [ "$rc" -eq 0 ]; then rm -rf "$scratch"; else echo "test data kept in $scratch" >&2; fi
  fi
}
trap stop EXIT
# The servers' pid files and data live here; pinned now, because TMPDIR changes below and stop() must
# find the same dir (with TMPDIR moved, it found no pid file and left the servers running).
export S4_SERVICES_DIR="${S4_SERVICES_DIR:-${TMPDIR:-/tmp}/s4-services}"
for s in redis s3 kafka; do
  scripts/services/$s.sh status >/dev/null 2>&1 || started+=("$s")
  out=$(scripts/services/$s.sh start)
  eval "$out"
done

scripts/install-chromium.sh   # the console's browser test
# Every suite makes its data dirs under os.tmpdir(): one dir per run, removed by stop().
scratch=$(mktemp -d "${TMPDIR:-/tmp}/s4-test-XXXXXX")
export TMPDIR="$scratch"
npx vitest run "$@"
if [ $# -eq 0 ]; then
  npm --workspace infra test --silent
fi
