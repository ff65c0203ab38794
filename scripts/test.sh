#!/usr/bin/env bash
# The whole test suite: build, start the real servers the suites need (installing them the
# first time), run unit, contract and end-to-end suites plus the infrastructure tests, stop
# the servers again. Usage: npm test [-- vitest filters]
set -euo pipefail
cd "$(dirname "$0")/.."

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<22||(a===22&&b<12)) { console.error(`Node ${process.version} is too old: S4 needs >= 22.12 (npm install -g node@24)`); process.exit(1) }'

npm run build --silent
npm run typecheck --silent -w @s4/sdk -w @s4/cli   # type tests of the public SDK/CLI surface

stop() { scripts/services/s3.sh stop || true; scripts/services/redis.sh stop || true; }
trap stop EXIT
out=$(scripts/services/redis.sh start)
eval "$out"
out=$(scripts/services/s3.sh start)
eval "$out"

npx vitest run "$@"
if [ $# -eq 0 ] && [ -f infra/package.json ] && grep -q '"test"' infra/package.json; then
  npm --workspace infra test --silent
fi
