// Series-index queries at scale (issue 12, item 5): the cardinality bench's data shape
// (IDX_METRICS × IDX_HOSTS series, tags host and dc, one float every 10 s over IDX_MINUTES, half
// of the hosts replaced half-way), loaded once into an embedded S4 and a VictoriaMetrics, kept in
// $BENCH_WORK, then queried by freshly started servers: an empty answer (the HTTP floor), the 1 %
// tag query (`host=~host-[0-9]*00` of one metric), a single series, tag keys and the values of
// `host`; cold (first after start) and warm (median), and the server's CPU time per warm query
// (utime + stime from /proc, so the figure holds on a shared machine better than wall time), and
// for the cold one (coldCpuMs: one query, so in 10 ms clock ticks).
// Usage (after `npm run build`):
//   node scripts/bench/series-index.mjs            load if the kept data is missing, then query
//   IDX_RELOAD=1 ...                                 load again
//   IDX_HOSTS (10000) IDX_METRICS (20) IDX_MINUTES (6) IDX_REPEATS (30) IDX_VM (1: also VictoriaMetrics)
//   IDX_CPU_PROF=1: the query-phase S4 runs with --cpu-prof into $BENCH_WORK/prof
//   IDX_ONLY=tag1pct,single: only these queries (empty, tag1pct, single, labels, hostValues)
//   IDX_CACHE_BYTES: S4_CACHE_BYTES of the query phase (S4's default when unset)
//   BENCH_S4_MAIN: another build's apps/api/dist/main.js (a baseline)
//   BENCH_WORK (/tmp/s4-series-index) BENCH_S4_PORT (18641) BENCH_VM_PORT (18643)
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, stop } from './lib/proc.mjs';
import { agent, ok, request, waitHttp } from './lib/http.mjs';
import { median } from './lib/stats.mjs';

const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const K = {
  hosts: num('IDX_HOSTS', 10_000),
  metrics: num('IDX_METRICS', 20),
  minutes: num('IDX_MINUTES', 6),
  repeats: num('IDX_REPEATS', 30),
  vm: env.IDX_VM !== '0',
  s4Port: num('BENCH_S4_PORT', 18641),
  vmPort: num('BENCH_VM_PORT', 18643),
};
const ROOT = new URL('../../', import.meta.url).pathname;
const WORK = env.BENCH_WORK || '/tmp/s4-series-index';
const TAG = `${K.metrics}x${K.hosts}x${K.minutes}`;
const S4_DIR = join(WORK, `s4-${TAG}`);
const VM_DIR = join(WORK, `vm-${TAG}`);
const META = join(WORK, `meta-${TAG}.json`);
const HOUR = 3_600_000;
const http = agent(4);
const log = (...a) => console.error(`[series-index ${new Date().toISOString().slice(11, 19)}]`, ...a);

function childEnv(extra) {
  const e = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  return { ...e, ...extra };
}

// Workers parked: the load flushes and compacts through the admin routes, and nothing runs
// beside the queries.
const s4Env = (loading) => ({
  S4_HOST: '127.0.0.1',
  S4_PORT: String(K.s4Port),
  S4_LOG_LEVEL: 'warn',
  S4_NAMESPACE: 'bench',
  S4_DATA_DIR: S4_DIR,
  S4_MAX_SAMPLES_PER_REQUEST: String(Math.max(1_000_000, K.metrics * K.hosts)),
  S4_MAX_BODY_BYTES: String(Math.min(1024 ** 3, Math.max(64 * 2 ** 20, K.metrics * K.hosts * 120))),
  S4_COMPACT_SETTLE_MS: '0',
  // The load flushes as S4 does by default (a flush of everything at the end loses its shard
  // leases on a loaded machine); the query phase has nothing hot left to flush.
  S4_FLUSH_INTERVAL_MS: loading ? '10000' : '3600000',
  S4_LEASE_TTL_MS: '120000',
  S4_COMPACT_INTERVAL_MS: '86400000',
  S4_ROLLUP_INTERVAL_MS: '86400000',
  S4_REQUEST_TIMEOUT_MS: '1800000',
  ...(env.IDX_CACHE_BYTES ? { S4_CACHE_BYTES: env.IDX_CACHE_BYTES } : {}),
});

async function startS4(prof, loading = false) {
  const args = ['--max-old-space-size=12288', ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${join(WORK, 'prof')}`] : []), env.BENCH_S4_MAIN || join(ROOT, 'apps/api/dist/main.js')];
  const child = start(process.execPath, args, { env: childEnv(s4Env(loading)), log: join(WORK, 's4.log') });
  const base = `http://127.0.0.1:${K.s4Port}`;
  await Promise.race([waitHttp(`${base}/readyz`, 120_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 exited during start: ${JSON.stringify(x)}`)))]);
  return { child, base };
}

async function startVM() {
  const child = start(env.BENCH_VM_BIN || 'victoria-metrics', [`-httpListenAddr=127.0.0.1:${K.vmPort}`, `-storageDataPath=${VM_DIR}`, '-retentionPeriod=100y', '-search.disableCache', '-loggerLevel=ERROR', '-search.maxUniqueTimeseries=100000000'], {
    env: childEnv({}),
    log: join(WORK, 'vm.log'),
  });
  const base = `http://127.0.0.1:${K.vmPort}`;
  await Promise.race([waitHttp(`${base}/health`, 60_000), child.exitedPromise.then((x) => Promise.reject(new Error(`VictoriaMetrics exited during start: ${JSON.stringify(x)}`)))]);
  return { child, base };
}

/** Scrape rounds as S4 JSON columnar and as Prometheus text (the cardinality bench's shape). */
function* rounds(target, start0) {
  const n = Math.floor((K.minutes * 60) / 10);
  const churn = Math.floor(n / 2);
  let seed = 7;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  for (let r = 0; r < n; r++) {
    const ts = start0 + r * 10_000;
    const [h0, h1] = r < churn ? [0, K.hosts] : [K.hosts >> 1, K.hosts + (K.hosts >> 1)];
    const parts = [];
    for (let h = h0; h < h1; h++)
      for (let m = 0; m < K.metrics; m++) {
        const v = Math.round(rand() * 10_000) / 100;
        if (target === 's4') parts.push(`{"metric":"node_m${m}","tags":{"host":"host-${h}","dc":"dc-${h % 8}"},"ts":[${ts}],"fields":{"value":[${v}]}}`);
        else parts.push(`node_m${m}{host="host-${h}",dc="dc-${h % 8}"} ${v} ${ts}`);
      }
    yield Buffer.from(target === 's4' ? `{"series":[${parts.join(',')}]}` : `${parts.join('\n')}\n`);
  }
}

/** An admin pass that lost a lease to the periodic one (409) is asked again: passes are idempotent. */
async function retry(pass) {
  for (let i = 0; ; i++) {
    try {
      return await pass();
    } catch (e) {
      if (e.status !== 409 || i >= 5) throw e;
      log(`retrying: ${e.message.slice(0, 200)}`);
    }
  }
}

async function load() {
  rmSync(S4_DIR, { recursive: true, force: true });
  rmSync(VM_DIR, { recursive: true, force: true });
  mkdirSync(S4_DIR, { recursive: true });
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const start0 = end - K.minutes * 60_000;
  const s4 = await startS4(false, true);
  try {
    const t = performance.now();
    for (const body of rounds('s4', start0)) await ok(`${s4.base}/v1/write`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, agent: http }).catch((e) => { log(e); throw e; });
    log(`S4 writes ${((performance.now() - t) / 1000).toFixed(1)} s`);
    await retry(() => ok(`${s4.base}/v1/admin/flush`, { method: 'POST', agent: http }));
    const c = await retry(() => ok(`${s4.base}/v1/admin/compact`, { method: 'POST', agent: http }));
    log(`S4 flushed and compacted: ${c.body.toString().slice(0, 300)}`);
  } finally {
    await stop(s4.child);
  }
  if (K.vm) {
    const vm = await startVM();
    try {
      for (const body of rounds('vm', start0)) await ok(`${vm.base}/api/v1/import/prometheus`, { method: 'POST', body, headers: { 'content-type': 'text/plain' }, agent: http });
      await ok(`${vm.base}/internal/force_flush`, { agent: http });
      await ok(`${vm.base}/internal/force_merge`, { agent: http });
      await new Promise((r) => setTimeout(r, 5000));
    } finally {
      await stop(vm.child);
    }
  }
  writeFileSync(META, JSON.stringify({ start0, end }));
}

/** utime + stime of a process, in ms. */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / 100; // clock ticks of 10 ms
}

async function measure(pid, base, queries) {
  const out = {};
  const only = env.IDX_ONLY ? new Set(env.IDX_ONLY.split(',')) : null;
  for (const [name, path, count] of queries) {
    if (only && !only.has(name)) continue;
    const url = `${base}${path}`;
    const a = performance.now();
    const ca = cpuMs(pid);
    const first = await request(url, { agent: http });
    if (first.status !== 200) throw new Error(`${name}: ${first.status} ${first.body.toString().slice(0, 300)}`);
    const cold = performance.now() - a;
    const coldCpu = cpuMs(pid) - ca;
    const ms = [];
    const c0 = cpuMs(pid);
    for (let i = 0; i < K.repeats; i++) {
      const b = performance.now();
      await request(url, { agent: http });
      ms.push(performance.now() - b);
    }
    const cpu = (cpuMs(pid) - c0) / K.repeats;
    out[name] = { coldMs: +cold.toFixed(1), coldCpuMs: coldCpu, warmMedianMs: +median(ms).toFixed(2), cpuMsPerQuery: +cpu.toFixed(2), answer: count(first.body) };
  }
  return out;
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  if (env.IDX_RELOAD === '1' || !existsSync(META)) await load();
  const { start0, end } = JSON.parse(readFileSync(META, 'utf8'));
  const re = 'host-[0-9]*00';
  const r = `from=${start0}&to=${end}`;
  const jsonSeries = (b) => JSON.parse(b.toString()).series?.length ?? JSON.parse(b.toString()).length;
  const s4Queries = [
    ['empty', `/v1/query?metric=node_none&${r}&format=json`, jsonSeries],
    ['tag1pct', `/v1/query?metric=node_m0&match=${encodeURIComponent(`host=~${re}`)}&${r}&format=json`, jsonSeries],
    ['single', `/v1/query?metric=node_m0&tag=host:host-${K.hosts - 1}&${r}&format=json`, jsonSeries],
    ['labels', `/v1/labels?${r}`, (b) => b.length],
    ['hostValues', `/v1/labels/host/values?${r}`, (b) => b.length],
  ];
  const s4 = await startS4(env.IDX_CPU_PROF === '1');
  let s4r;
  try {
    s4r = await measure(s4.child.pid, s4.base, s4Queries);
  } finally {
    await stop(s4.child);
  }
  let vmr;
  if (K.vm && existsSync(VM_DIR)) {
    const v = `start=${start0 / 1000}&end=${(end - 1) / 1000}`;
    const lines = (b) => b.toString().split('\n').filter(Boolean).length;
    const vm = await startVM();
    try {
      vmr = await measure(vm.child.pid, vm.base, [
        ['empty', `/api/v1/export?match[]=${encodeURIComponent('node_none')}&${v}`, lines],
        ['tag1pct', `/api/v1/export?match[]=${encodeURIComponent(`node_m0{host=~"${re}"}`)}&${v}`, lines],
        ['single', `/api/v1/export?match[]=${encodeURIComponent(`node_m0{host="host-${K.hosts - 1}"}`)}&${v}`, lines],
        ['labels', `/api/v1/labels?${v}`, (b) => b.length],
        ['hostValues', `/api/v1/label/host/values?${v}`, (b) => b.length],
      ]);
    } finally {
      await stop(vm.child);
    }
  }
  const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(JSON.stringify({ at: new Date().toISOString(), shape: TAG, series: K.metrics * Math.floor(K.hosts * 1.5), repeats: K.repeats, loadavg, cacheBytes: env.IDX_CACHE_BYTES ?? 'default', s4Main: env.BENCH_S4_MAIN ?? 'this checkout', s4: s4r, vm: vmr }, null, 1));
}

await main();
