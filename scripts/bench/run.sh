#!/usr/bin/env bash
# npm run bench: S4 (embedded, Redis + S3) side by side with VictoriaMetrics on the same dataset.
# Builds S4, installs VictoriaMetrics (Debian package) if missing, starts its own Redis and S3
# (scripts/services, on the bench's own ports and dirs so it never touches the test servers),
# runs scripts/bench/bench.mjs, and stops what it started.
#
# Knobs (env): BENCH_SENSORS (200) BENCH_HOURS (24) BENCH_REPEATS (7) BENCH_SINGLE_SECONDS (20)
#   BENCH_SINGLE_CLIENTS (50) BENCH_MODES (embedded,redis+s3,embedded-fsync-never)
#   BENCH_BATCH_SAMPLES (100000) BENCH_INGEST_CONCURRENCY (4) BENCH_CPU_PROF (0; 1 = node --cpu-prof)
#   BENCH_WORKERS (defaults: periodic flush and rollups on, as users run S4; off = parked, admin passes only)
#   BENCH_WRITE_DOC (1; 0 = leave docs/ alone) BENCH_WORK (${TMPDIR:-/tmp}/s4-bench)
#   BENCH_S4_PORT (18480) BENCH_VM_PORT (18428) BENCH_REDIS_PORT (6491) BENCH_S3_PORT (9491)
# Quick try: BENCH_SENSORS=20 BENCH_HOURS=2 BENCH_REPEATS=3 BENCH_SINGLE_SECONDS=3 BENCH_WRITE_DOC=0 npm run bench
#
# Records workload (issue 11): `npm run bench -- records` (or BENCH_WORKLOAD=records npm run bench).
# Nested DirtMate-shaped records (~1.65 KB of JSON each) into S4 and into PostgreSQL 15 (jsonb;
# Debian package `postgresql`, installed with apt-get if missing, a private cluster under
# $BENCH_WORK/pg on its own port, stopped at the end); runs scripts/bench/records.mjs.
# Knobs: BENCH_MACHINES (300) BENCH_RECORD_HOURS (2; or BENCH_RECORD_MINUTES) BENCH_REPEATS (5)
#   BENCH_BATCH_RECORDS (500) BENCH_INGEST_CONCURRENCY (4) BENCH_VERIFY_MACHINES (10)
#   BENCH_MODES (embedded,redis+s3) BENCH_PG_PORT (18432) BENCH_WRITE_DOC, BENCH_WORK, ports as above
#   BENCH_CPU_PROF (0; 1 = the S4 server runs with --cpu-prof into $BENCH_WORK/prof)
#   BENCH_S4_NODE_ARGS (extra node options for the S4 process, space-separated; also cardinality)
# Smoke run: BENCH_MACHINES=20 BENCH_RECORD_MINUTES=10 BENCH_WRITE_DOC=0 npm run bench -- records
#
# Cardinality workload (issue 12): `npm run bench -- cardinality`. BENCH_METRICS × BENCH_HOSTS
# series, one sample each every BENCH_INTERVAL_S s over BENCH_MINUTES, half the hosts replaced
# half-way, a scrape round in bodies of at most BENCH_BATCH_SERIES series, into S4 and VictoriaMetrics;
# runs scripts/bench/cardinality.mjs.
# Knobs: BENCH_METRICS (20) BENCH_HOSTS (50000) BENCH_MINUTES (60) BENCH_INTERVAL_S (10)
#   BENCH_MODES (embedded; add redis+s3) BENCH_BATCH_SERIES (50000) BENCH_CLIENTS (2) BENCH_REPEATS (5)
#   BENCH_SERIES_CACHE_ENTRIES (S4_SERIES_CACHE_ENTRIES; default sized to the active series) BENCH_CPU_PROF (0)
#   BENCH_S4_NODE_ARGS (e.g. "--import ./probe.mjs" or --max-semi-space-size=16)
# Smoke run: BENCH_METRICS=5 BENCH_HOSTS=200 BENCH_MINUTES=10 BENCH_WRITE_DOC=0 npm run bench -- cardinality
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
log() { echo "[bench] $*" >&2; }

export BENCH_WORK="${BENCH_WORK:-${TMPDIR:-/tmp}/s4-bench}"
export S4_SERVICES_DIR="$BENCH_WORK/services"
export S4_REDIS_PORT="${BENCH_REDIS_PORT:-6491}"
export S4_S3_PORT="${BENCH_S3_PORT:-9491}"
WORKLOAD="${1:-${BENCH_WORKLOAD:-float}}"
case "$WORKLOAD" in
  float) MODES="${BENCH_MODES:-embedded,redis+s3,embedded-fsync-never}" ;;
  records) MODES="${BENCH_MODES:-embedded,redis+s3}" ;;
  cardinality) MODES="${BENCH_MODES:-embedded}" ;;
  *) log "unknown workload '$WORKLOAD' (float, records, cardinality)"; exit 2 ;;
esac
needs_services=0
[[ ",$MODES," == *",redis+s3,"* ]] && needs_services=1

started=()
# the records workload's private PostgreSQL cluster (records.mjs stops it; this is the backstop)
pg_bindir() { local d; for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do [[ -x $d/initdb && -x $d/pg_ctl ]] && { echo "$d"; return 0; }; done; return 1; }
stop_pg() {
  [[ -f "$BENCH_WORK/pg/data/postmaster.pid" ]] || return 0
  local bin="${BENCH_PG_BINDIR:-$(pg_bindir || true)}"
  [[ -n $bin ]] || return 0
  if ((EUID == 0)); then runuser -u postgres -- "$bin/pg_ctl" -D "$BENCH_WORK/pg/data" -m fast -w stop >&2 || true
  else "$bin/pg_ctl" -D "$BENCH_WORK/pg/data" -m fast -w stop >&2 || true; fi
}
cleanup() {
  local rc=$?
  stop_pg
  for svc in "${started[@]}"; do scripts/services/"$svc".sh stop >&2 || true; done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "building S4"
npm run build --silent >&2

if [[ $WORKLOAD == records ]]; then
  if ! pg_bindir >/dev/null; then
    log "installing postgresql (Debian package)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq postgresql >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null && apt-get install -y -qq postgresql >/dev/null; } \
      || { log "apt-get install postgresql failed"; exit 1; }
  fi
  BENCH_PG_BINDIR="${BENCH_PG_BINDIR:-$(pg_bindir)}"
  export BENCH_PG_BINDIR
elif ! command -v victoria-metrics >/dev/null; then
  log "installing victoria-metrics (Debian package)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq victoria-metrics >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null && apt-get install -y -qq victoria-metrics >/dev/null; } \
    || { log "apt-get install victoria-metrics failed"; exit 1; }
fi
if [[ $WORKLOAD != records ]]; then
  BENCH_VM_BIN="$(command -v victoria-metrics)"
  BENCH_VM_VERSION="$(dpkg-query -W -f='${Version}' victoria-metrics 2>/dev/null || echo unknown)"
  export BENCH_VM_BIN BENCH_VM_VERSION
fi

# A clean slate: stop leftovers of an earlier bench run (only ours: pidfiles under BENCH_WORK).
for svc in s3 redis; do scripts/services/"$svc".sh stop >/dev/null 2>&1 || true; done
stop_pg >/dev/null 2>&1
rm -rf "$BENCH_WORK"
mkdir -p "$BENCH_WORK"

if ((needs_services)); then
  log "starting Redis (port $S4_REDIS_PORT) and S3 (port $S4_S3_PORT) under $S4_SERVICES_DIR"
  out=$(scripts/services/redis.sh start) && eval "$out"
  started=(redis "${started[@]}")
  out=$(scripts/services/s3.sh start) && eval "$out"
  started=(s3 "${started[@]}")
  export BENCH_REDIS_PIDFILE="$S4_SERVICES_DIR/redis/redis.pid"
  export BENCH_S3_PIDFILE="$S4_SERVICES_DIR/s3/s3.pid"
  export BENCH_S3_DATA_DIR="$S4_SERVICES_DIR/s3/data"
fi

if [[ $WORKLOAD == records ]]; then
  cmd="npm run bench -- records"
  knobs=(BENCH_MACHINES BENCH_RECORD_HOURS BENCH_RECORD_MINUTES BENCH_REPEATS BENCH_BATCH_RECORDS BENCH_INGEST_CONCURRENCY BENCH_VERIFY_MACHINES BENCH_MODES)
elif [[ $WORKLOAD == cardinality ]]; then
  cmd="npm run bench -- cardinality"
  knobs=(BENCH_METRICS BENCH_HOSTS BENCH_MINUTES BENCH_INTERVAL_S BENCH_MODES BENCH_BATCH_SERIES BENCH_CLIENTS BENCH_ROUNDS_IN_FLIGHT BENCH_SERIES_CACHE_ENTRIES BENCH_REPEATS)
else
  cmd="npm run bench"
  knobs=(BENCH_SENSORS BENCH_HOURS BENCH_REPEATS BENCH_SINGLE_SECONDS BENCH_SINGLE_CLIENTS BENCH_MODES BENCH_BATCH_SAMPLES BENCH_INGEST_CONCURRENCY BENCH_CPU_PROF)
fi
for k in "${knobs[@]}"; do
  [[ -n ${!k:-} ]] && cmd="$k=${!k} $cmd"
done
export BENCH_COMMAND="$cmd"
export BENCH_MODES="$MODES"

if [[ $WORKLOAD == records ]]; then
  node --max-old-space-size=8192 --expose-gc scripts/bench/records.mjs
elif [[ $WORKLOAD == cardinality ]]; then
  node --max-old-space-size=8192 scripts/bench/cardinality.mjs
else
  node --max-old-space-size=8192 scripts/bench/bench.mjs
fi
