// The cardinality bench's write path in one process, stage by stage, without HTTP: a scrape round
// of BENCH_HOSTS × BENCH_METRICS series (one sample each, the body cardinality.mjs sends) goes
// through what POST /v1/write does on the HTTP thread (the scan of the body's bytes, parseWrite,
// admission, Writer.encode, the embedded hot tier's append: log record encoding, write, apply),
// PROBE_ROUNDS times. Reports CPU µs per series of each stage (process.cpuUsage: GC helper threads
// count too) and of the main thread alone (/proc), and the young collections and their pause time.
//
//   node scripts/bench/write-path.mjs                      (after `npm run build`)
//   PROBE_ALLOC=1 node scripts/bench/write-path.mjs        bytes allocated per series and stage
//                                                          (re-runs itself with a young generation
//                                                          large enough that no collection runs in a stage)
//   node --cpu-prof --cpu-prof-dir=/tmp/prof scripts/bench/write-path.mjs
//   knobs: BENCH_HOSTS (2000) BENCH_METRICS (20) PROBE_ROUNDS (10) PROBE_FSYNC (never|always)
//          PROBE_DIR (a fresh temp dir) PROBE_JSON=1 (one JSON line at the end)
//          PROBE_CACHE (series per generation of the write path's caches; default every series, as the
//          cardinality bench sets S4_SERIES_CACHE_ENTRIES; 0 keeps S4's default, 65,536)
//          PROBE_LIBS (the libs/ folder whose dist to load: another build's, for a before)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { prng } from './lib/dataset.mjs';

const env = process.env;
const libs = resolve(env.PROBE_LIBS ?? new URL('../../libs', import.meta.url).pathname);
const lib = (name) => import(pathToFileURL(join(libs, name, 'dist/index.js')).href);
const { Admission, Writer, parseWrite, releaseBody, runSteps, scanSeriesSteps, sizeSeriesCaches } = await lib('engine');
const { EmbeddedHotTier, MemoryCardinalityStore } = await lib('storage');
const { NamespaceSet } = await lib('core');
const { loadConfig, policyDefaults, singleNamespace } = await lib('config');
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const HOSTS = num('BENCH_HOSTS', 2000);
const METRICS = num('BENCH_METRICS', 20);
const ROUNDS = num('PROBE_ROUNDS', 10);
const SERIES = HOSTS * METRICS;

if (env.PROBE_ALLOC === '1' && !process.execArgv.includes('--expose-gc')) {
  // A young generation that holds a whole round: no collection inside a stage, so the heap's growth is what it allocated.
  const r = spawnSync(process.execPath, ['--expose-gc', '--min-semi-space-size=512', '--max-semi-space-size=512', ...process.execArgv, process.argv[1]], { stdio: 'inherit', env });
  process.exit(r.status ?? 1);
}
const alloc = typeof globalThis.gc === 'function';
const cache = num('PROBE_CACHE', SERIES);
if (cache > 0) sizeSeriesCaches(cache);

const config = loadConfig({ S4_MAX_SAMPLES_PER_REQUEST: String(Math.max(1_000_000, SERIES)) });
const policies = new NamespaceSet(singleNamespace(policyDefaults(config)));
const dir = env.PROBE_DIR || mkdtempSync(join(tmpdir(), 's4-write-path-'));
const hot = await EmbeddedHotTier.open({ dir, fsync: env.PROBE_FSYNC === 'always' ? 'always' : 'never' });
const route = (metric) => {
  const p = policies.resolve(metric);
  return { ns: p.name, shards: p.shards, maxRecordBytes: p.limits.maxRecordBytes };
};
const writer = new Writer(hot, { ns: config.namespace, shards: config.shards, maxRecordBytes: config.limits.maxRecordBytes, route });
const admission = new Admission(new MemoryCardinalityStore(), () => policies);

/** Round r's body as cardinality.mjs builds it (same names, two-decimal random walks), its samples at now - (ROUNDS - r) × 10 s. */
function body(r, now) {
  const rand = prng(7 + r);
  const ts = now - (ROUNDS - r) * 10_000;
  const parts = [];
  for (let h = 0; h < HOSTS; h++)
    for (let m = 0; m < METRICS; m++) parts.push(`{"metric":"node_m${m}","tags":{"host":"host-${h}","dc":"dc-${h % 8}"},"ts":[${ts}],"fields":{"value":[${Math.round(rand() * 10_000) / 100}]}}`);
  return Buffer.from(`{"series":[${parts.join(',')}]}`);
}

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
/** The main thread's CPU so far, µs (its /proc/self/task entry: utime + stime). */
function mainThreadUs() {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

const gcs = { young: 0, youngMs: 0, old: 0, oldMs: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    // kind 1 = scavenge (minor), others major/incremental/weak callbacks.
    if (e.detail?.kind === 1) (gcs.young++, (gcs.youngMs += e.duration));
    else (gcs.old++, (gcs.oldMs += e.duration));
  }
}).observe({ entryTypes: ['gc'] });

const STAGES = ['scan', 'parse', 'admit', 'encode', 'append'];
const totals = Object.fromEntries(STAGES.map((s) => [s, { cpu: 0, wall: 0, bytes: 0 }]));
const first = Object.fromEntries(STAGES.map((s) => [s, 0]));
let mainUs = 0;
let cpuAll = 0;

async function stage(name, r, fn) {
  if (alloc) globalThis.gc();
  const h0 = alloc ? process.memoryUsage().heapUsed : 0;
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const out = await fn();
  const c = process.cpuUsage(c0);
  const cpu = c.user + c.system;
  const bytes = alloc ? process.memoryUsage().heapUsed - h0 : 0;
  if (r === 0) first[name] = cpu;
  else {
    totals[name].cpu += cpu;
    totals[name].wall += (performance.now() - w0) * 1000;
    totals[name].bytes += bytes;
  }
  return out;
}

const now = Date.now();
const bodies = Array.from({ length: ROUNDS }, (_, r) => body(r, now));
const gc0 = { ...gcs };
let t0 = 0;
let p0 = null;
for (let r = 0; r < ROUNDS; r++) {
  const bytes = bodies[r];
  if (r === 1) {
    t0 = mainThreadUs();
    p0 = process.cpuUsage();
    Object.assign(gc0, gcs);
  }
  // Builds before this branch's body.ts change took the body's text first (scanSeriesSteps(text, bytes)).
  const scanned = await stage('scan', r, () => runSteps(scanSeriesSteps.length === 2 ? scanSeriesSteps(bytes.toString('latin1'), bytes) : scanSeriesSteps(bytes)));
  if (!scanned) throw new Error('the body did not take the scanned path');
  const input = { kind: 'scanned', scanned };
  const series = await stage('parse', r, () => parseWrite(input, config.limits, Date.now()));
  releaseBody(input);
  await stage('admit', r, () => admission.admit(series, Date.now()));
  const encoded = await stage('encode', r, () => writer.encode(series));
  await stage('append', r, () => writer.commit(encoded));
  if (r === ROUNDS - 1) {
    mainUs = mainThreadUs() - t0;
    const p = process.cpuUsage(p0);
    cpuAll = p.user + p.system;
  }
}
await hot.close();
if (!env.PROBE_DIR) rmSync(dir, { recursive: true, force: true });

const n = (ROUNDS - 1) * SERIES;
const per = (v) => (v / n).toFixed(3);
const rows = STAGES.map((s) => ({ stage: s, cpuUsPerSeries: +per(totals[s].cpu), wallUsPerSeries: +per(totals[s].wall), bytesPerSeries: alloc ? Math.round(totals[s].bytes / n) : undefined, firstRoundUsPerSeries: +(first[s] / SERIES).toFixed(3) }));
const sum = rows.reduce((a, r) => a + r.cpuUsPerSeries, 0);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`write path, ${ROUNDS} rounds × ${SERIES} series (first round: new series, not in the totals), fsync ${env.PROBE_FSYNC === 'always' ? 'always' : 'never'}, load ${load}`);
console.table(rows);
const young = gcs.young - gc0.young;
console.log(
  `stages ${sum.toFixed(3)} µs/series (process CPU, rounds 2..${ROUNDS}); process ${per(cpuAll)}, main thread ${per(mainUs)} µs/series; young GCs ${young} (${(young / (ROUNDS - 1)).toFixed(1)}/round, ${((gcs.youngMs - gc0.youngMs) / (ROUNDS - 1)).toFixed(1)} ms/round), old ${gcs.old - gc0.old}` +
    (alloc ? `; allocated ${rows.reduce((a, r) => a + r.bytesPerSeries, 0)} B/series` : ''),
);
if (env.PROBE_JSON === '1') console.log(JSON.stringify({ libs, cache, load, rows, stagesUs: sum, processUs: +per(cpuAll), mainUs: +per(mainUs), youngPerRound: young / (ROUNDS - 1) }));
