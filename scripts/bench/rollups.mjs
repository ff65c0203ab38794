// Rollup benchmark (issues 3 and 12): S4 embedded, two shapes (BENCH_SHAPE):
//   sensors (default): 200 sensors × 1 Hz × 7 days, one float each (the main bench's dataset);
//   metrics: 100 hosts × 20 metrics × 10 s scrape interval × 3 days (half gauges with one
//            decimal, half counters), as an infrastructure-metrics team writes them.
// BENCH_WORKERS=parked (or off): the flush, rollup and compact workers are parked (intervals of
// one hour) and each pass runs once by its admin endpoint, so the state before day objects can
// be measured: loads day by day (flushing after each day, as the segment worker would), builds
// rollups, restarts the server so the first query of each kind is cold, then measures each query
// cold (once) and warm (median of BENCH_REPEATS) with the object reads it needed (from /metrics);
// then compacts, rolls up again and measures again.
// BENCH_WORKERS=defaults (default): S4 as users run it (every S4_* setting at its default, no admin pass):
// the same data, dated the last BENCH_DAYS closed days so that the default lookbacks cover it,
// is written while the workers flush, fold and roll up on their own; the bench waits until they
// have settled (every shard-day one day object with its day rollup), then measures as above.
// Usage: npm run build && node scripts/bench/rollups.mjs
//   env: BENCH_SHAPE (sensors|metrics), BENCH_WORKERS (defaults|parked), BENCH_SENSORS, BENCH_HOSTS,
//        BENCH_DAYS, BENCH_REPEATS, BENCH_SETTLE_MS (defaults: give up after, 3600000), BENCH_WRITE_DOC=0
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { decodeCatalog } from '../../libs/format/dist/index.js';
import { currentDayRollupKey, currentRollupKey, isDayRollupKey, isDaySegmentKey } from '../../libs/core/dist/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';
import { generate, HOUR, prng } from './lib/dataset.mjs';
import { ok, request, waitHttp } from './lib/http.mjs';
import { dirBytes, machine, start, stop } from './lib/proc.mjs';
import { summary } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
const { Packr, Unpackr } = require('msgpackr');
const packr = new Packr({ useRecords: false, moreTypes: true });
const unpackr = new Unpackr({ moreTypes: true, mapsAsObjects: true, int64AsType: 'number', useRecords: false });

const SHAPE = process.env.BENCH_SHAPE ?? 'sensors';
if (!['sensors', 'metrics'].includes(SHAPE)) throw new Error(`BENCH_SHAPE=${SHAPE}: sensors or metrics`);
const METRICS = SHAPE === 'metrics';
const SENSORS = Number(process.env.BENCH_SENSORS ?? 200);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 100);
const PER_HOST = 20;
const DAYS = Number(process.env.BENCH_DAYS ?? (METRICS ? 3 : 7));
const REPEATS = Number(process.env.BENCH_REPEATS ?? 7);
const WORKERS = process.env.BENCH_WORKERS || 'defaults';
if (!['parked', 'off', 'defaults'].includes(WORKERS)) throw new Error(`BENCH_WORKERS=${WORKERS}: defaults, or parked (off)`);
const DEFAULTS = WORKERS === 'defaults';
const DAY = 24 * HOUR;
// With the defaults the data must be recent (the workers look back 7 days) and its days closed
// (the day folds wait 2 h and 3 h after a day ends).
const START = DEFAULTS ? Math.floor((Date.now() - 4 * HOUR) / DAY) * DAY - DAYS * DAY : Date.UTC(2026, 8, 1);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3_600_000);
const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 's4-rollup-bench-'));
const port = 18000 + Math.floor(Math.random() * 1000);
const url = `http://127.0.0.1:${port}`;
const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('S4_')));
const env = DEFAULTS
  ? { ...base, S4_DATA_DIR: dir, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn' }
  : { ...base, S4_DATA_DIR: dir, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn', S4_FLUSH_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000', S4_COMPACT_INTERVAL_MS: '3600000', S4_COMPACT_LOOKBACK_MS: String(3650 * 86_400_000), S4_REQUEST_TIMEOUT_MS: '3600000' };

let server;
async function boot() {
  server = start(process.execPath, [join(root, 'apps/api/dist/main.js')], { env, log: join(dir, 'server.log') });
  await waitHttp(`${url}/readyz`, 60_000);
}
async function objectReads() {
  const text = (await ok(`${url}/metrics`)).body.toString();
  return Number(/^s4_object_reads_total (\d+)/m.exec(text)?.[1] ?? NaN);
}

await boot();
let loadMs = 0;
let flushMs = 0;
/** One day of the metrics shape: per host and metric, a sample every 10 s (host-specific phase, a few ms of jitter). */
function metricsDay(d) {
  const out = [];
  const day0 = START + d * DAY;
  for (let h = 0; h < HOSTS; h++)
    for (let m = 0; m < PER_HOST; m++) {
      const rnd = prng(20261123 + h * 1000 + m * 7 + d * 1_000_003);
      const phase = Math.floor(prng(h + 1)() * 10_000);
      const counter = m % 2 === 1;
      // Counters continue across days (their start grows with the day), gauges wander in 0–100.
      let v = counter ? (h + 1) * 1e6 + d * 8640 * 250 : 50 + (rnd() - 0.5) * 40;
      const ts = new Array(8640);
      const value = new Array(8640);
      for (let i = 0; i < 8640; i++) {
        ts[i] = day0 + phase + i * 10_000 + (rnd() < 0.1 ? Math.floor(rnd() * 5) : 0);
        if (counter) v += Math.floor(rnd() * 500);
        else v = Math.min(100, Math.max(0, v + (rnd() - 0.5) * 4));
        value[i] = counter ? v : Math.round(v * 10) / 10;
      }
      out.push({ metric: `node.m${String(m).padStart(2, '0')}`, tags: { host: `host-${String(h).padStart(4, '0')}` }, ts, fields: { value } });
    }
  return out;
}

let samplesLoaded = 0;
for (let d = 0; d < DAYS; d++) {
  const day = METRICS
    ? metricsDay(d)
    : generate({ sensors: SENSORS, hours: 24, start: START + d * DAY, seed: 20240601 + d }).sensors.map((s) => ({ metric: 'bench.value', tags: { sensor: s.name }, ts: s.ts, fields: { value: s.value } }));
  const t0 = performance.now();
  const per = METRICS ? 100 : 10;
  for (let i = 0; i < day.length; i += per) {
    const series = day.slice(i, i + per);
    for (const s of series) samplesLoaded += s.ts.length;
    await write(packr.pack({ series }));
  }
  const t1 = performance.now();
  if (!DEFAULTS) await ok(`${url}/v1/admin/flush`, { method: 'POST' });
  loadMs += t1 - t0;
  flushMs += performance.now() - t1;
  process.stderr.write(`day ${d + 1}/${DAYS} loaded\n`);
}
let rollup = null;
let rollupMs = 0;
let settleMs = 0;
if (DEFAULTS) {
  const t = performance.now();
  while (!(await settled())) {
    if (performance.now() - t > SETTLE_MS) throw new Error(`the workers did not settle within ${SETTLE_MS} ms`);
    await new Promise((r) => setTimeout(r, 5000));
  }
  settleMs = performance.now() - t;
} else {
  const t2 = performance.now();
  rollup = JSON.parse((await ok(`${url}/v1/admin/rollup`, { method: 'POST' })).body.toString());
  rollupMs = performance.now() - t2;
}
await stop(server);

/** A write, retried while the server answers 503 or 429 (it sheds load while its workers catch up). */
async function write(body) {
  for (let attempt = 0; ; attempt++) {
    const r = await request(`${url}/v1/write`, { body, headers: { 'content-type': 'application/msgpack' } });
    if (r.status >= 200 && r.status < 300) return;
    if ((r.status !== 503 && r.status !== 429) || attempt >= 600) throw new Error(`write: ${r.status} ${r.body.toString().slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 1000 * Number(r.headers['retry-after'] ?? 1)));
  }
}

/**
 * Whether the workers are done with the data: nothing left in the hot tier, every shard-day one
 * day object, and the day rollup computed from exactly it registered (the keys the planner expects).
 */
async function settled() {
  const health = JSON.parse((await ok(`${url}/v1/admin/shards`)).body.toString());
  if (health.shards.some((s) => s.hot.bytes > 0)) return false;
  const catDir = join(dir, 'objects/v1/default/cat');
  let days = 0;
  for (const shard of readdirSync(catDir, { withFileTypes: true })) {
    if (!shard.isDirectory()) continue;
    for (const f of readdirSync(join(catDir, shard.name))) {
      if (!f.endsWith('.s4cat')) continue;
      let cat;
      try {
        cat = decodeCatalog(new Uint8Array(readFileSync(join(catDir, shard.name, f))));
      } catch {
        return false; // being replaced while read
      }
      if (cat.entries.length === 0) continue;
      if (!cat.entries.every((e) => isDaySegmentKey(e.key))) return false;
      const ref = { ns: 'default', shard: cat.shard };
      const byWindow = new Map();
      for (const e of cat.entries) byWindow.set(e.window, [...(byWindow.get(e.window) ?? []), e.key]);
      const dayKey = currentDayRollupKey(ref, cat.day, [...byWindow].map(([w, keys]) => currentRollupKey(ref, w, keys)));
      let rolled;
      try {
        rolled = decodeCatalog(new Uint8Array(readFileSync(join(dir, 'objects/v1/default/rollup/cat', shard.name, f))));
      } catch {
        return false;
      }
      if (!rolled.entries.some((e) => e.key === dayKey) || !rolled.entries.every((e) => isDayRollupKey(e.key))) return false;
      days++;
    }
  }
  return days > 0;
}

const end = START + DAYS * DAY;
const sensor = 's007';
const queries = METRICS ? [
  ['one series, whole range, 1-h avg', `metric=node.m00&tag=host:host-0007&from=${START}&to=${end}&step=1h&agg=avg`],
  ['one metric of all hosts, whole range, 1-h avg', `metric=node.m00&from=${START}&to=${end}&step=1h&agg=avg`],
  ['one metric of all hosts, whole range, 1-h max by nothing (one line)', `metric=node.m00&from=${START}&to=${end}&step=1h&agg=max&groupBy=`],
  ['one series, one day, 5-min avg (no 5-min rollup: raw)', `metric=node.m00&tag=host:host-0007&from=${START + DAY}&to=${START + 2 * DAY}&step=5m&agg=avg`],
  ['one series, whole range raw, maxPoints=2000', `metric=node.m00&tag=host:host-0007&from=${START}&to=${end}&maxPoints=2000&format=msgpack`],
  ['(reference) one series, one raw day, all points', `metric=node.m00&tag=host:host-0007&from=${START + DAY}&to=${START + 2 * DAY}&format=msgpack`],
] : [
  ['one sensor, whole range, 1-h avg', `metric=bench.value&tag=sensor:${sensor}&from=${START}&to=${end}&step=1h&agg=avg`],
  ['all sensors, whole range, 1-h avg', `metric=bench.value&from=${START}&to=${end}&step=1h&agg=avg`],
  ['one sensor, one day, 1-min min/max/avg', `metric=bench.value&tag=sensor:${sensor}&from=${START + 3 * DAY}&to=${START + 4 * DAY}&step=1m&agg=min,max,avg`],
  ['one sensor, one raw day, maxPoints=1000', `metric=bench.value&tag=sensor:${sensor}&from=${START + 3 * DAY}&to=${START + 4 * DAY}&maxPoints=1000&format=msgpack`],
  ['one sensor, whole range raw, maxPoints=2000', `metric=bench.value&tag=sensor:${sensor}&from=${START}&to=${end}&maxPoints=2000&format=msgpack`],
  ['(reference) one sensor, one raw day, all points', `metric=bench.value&tag=sensor:${sensor}&from=${START + 3 * DAY}&to=${START + 4 * DAY}&format=msgpack`],
];
async function run(q) {
  const before = await objectReads();
  const t = performance.now();
  const r = await ok(`${url}/v1/query?${q}`);
  const parsed = q.includes('format=msgpack') ? unpackr.unpackMultiple(r.body) : JSON.parse(r.body.toString()).series;
  const ms = performance.now() - t;
  const points = parsed.reduce((n, s) => n + s.ts.length, 0);
  return { ms, reads: (await objectReads()) - before, points };
}
/** Every query once right after a restart (cold), then REPEATS times warm. */
async function measure() {
  await boot();
  const rows = [];
  for (const [name, q] of queries) {
    const cold = await run(q);
    const warm = [];
    for (let i = 0; i < REPEATS; i++) warm.push(await run(q));
    rows.push({ name, cold, warm: summary(warm.map((w) => w.ms)), warmReads: warm[warm.length - 1].reads, points: cold.points });
  }
  await stop(server);
  return rows;
}

/**
 * Bytes at rest under a catalog folder: the objects its catalogs name (once each: a day object is
 * listed per window), plus the catalogs and day lists. Objects a fold or a newer rollup replaced
 * wait out their delete grace (10 min) before a later pass deletes them; the bench does not wait.
 */
function atRest(catDir) {
  let bytes = 0;
  const keys = new Map();
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (!p.endsWith('.deletes')) {
        // (The pending-deletes lists are left out: they empty once the grace has passed.)
        bytes += statSync(p).size;
        if (p.endsWith('.s4cat')) for (const e of decodeCatalog(new Uint8Array(readFileSync(p))).entries) keys.set(e.key, e.size);
      }
    }
  };
  walk(catDir);
  for (const size of keys.values()) bytes += size;
  return { bytes, objects: keys.size };
}
const storage = () => ({ seg: atRest(join(dir, 'objects/v1/default/cat')), rol: atRest(join(dir, 'objects/v1/default/rollup/cat')) });

let rowsBefore = null;
let before = null;
let compact = null;
let compactMs = 0;
let rollup2 = null;
let rollup2Ms = 0;
if (!DEFAULTS) {
  rowsBefore = await measure();
  before = storage();
  await boot();
  const t3 = performance.now();
  compact = JSON.parse((await ok(`${url}/v1/admin/compact`, { method: 'POST' })).body.toString());
  compactMs = performance.now() - t3;
  const t4 = performance.now();
  rollup2 = JSON.parse((await ok(`${url}/v1/admin/rollup`, { method: 'POST' })).body.toString());
  rollup2Ms = performance.now() - t4;
  await stop(server);
}
const rowsAfter = await measure();
const after = storage();
const samples = samplesLoaded;
const onDisk = dirBytes(join(dir, 'objects')).bytes;
const m = machine();
let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
} catch {}
const f = (ms) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));
const cell = (r) => `${f(r.cold.ms)} (${r.cold.reads}) | ${f(r.warm.median)} (${f(r.warm.min)}–${f(r.warm.max)})`;
const restRow = (name, st) => `| ${name} | ${(st.seg.bytes / 2 ** 20).toFixed(2)} MiB, ${st.seg.objects} objects (${(st.seg.bytes / samples).toFixed(3)} B/sample) | ${(st.rol.bytes / 2 ** 20).toFixed(2)} MiB, ${st.rol.objects} objects (${(st.rol.bytes / samples).toFixed(3)} B/sample) | **${((100 * st.rol.bytes) / st.seg.bytes).toFixed(1)} %** |`;
const dataset = METRICS
  ? `- Dataset: ${HOSTS} hosts × ${PER_HOST} metrics × 10 s × ${DAYS} days (${(samples / 1e6).toFixed(1)} M samples; half gauges, one decimal, random walk in 0–100; half counters).`
  : `- Dataset: ${SENSORS} sensors × 1 Hz × ${DAYS} days (${(samples / 1e6).toFixed(1)} M samples, random walk, 2 decimals, jitter and gaps as in the main bench).`;
const md = [
  `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on commit \`${commit}\`; command \`${DEFAULTS ? '' : 'BENCH_WORKERS=parked '}${METRICS ? `BENCH_SHAPE=metrics BENCH_HOSTS=${HOSTS} ` : `BENCH_SENSORS=${SENSORS} `}BENCH_DAYS=${DAYS} node scripts/bench/rollups.mjs\` (after \`npm run build\`).`,
  '',
  `- Machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB, shared with other sessions while measuring (read ratios, not seconds); Node ${m.node}. S4 embedded (filesystem object store).`,
  DEFAULTS
    ? `${dataset} **S4's defaults on** (no S4_* setting, no admin pass): the data (the last ${DAYS} closed days) was written in ${(loadMs / 1000).toFixed(1)} s while the workers flushed, folded and rolled up on their own; they had settled (every shard-day one day object and its day rollup) ${(settleMs / 1000).toFixed(0)} s after the last write.`
    : `${dataset} Load ${(loadMs / 1000).toFixed(1)} s, flushes ${(flushMs / 1000).toFixed(1)} s, rollup build ${(rollupMs / 1000).toFixed(1)} s (${rollup.objects} objects). Flush, rollup and compaction workers parked (\`S4_*_INTERVAL_MS\` = 1 h); the bench runs each pass once by its admin endpoint.`,
  '',
  `- Each query: once right after a restart (cold: empty footer/block cache), then ${REPEATS} times warm (median, min–max). Client time includes transfer and parsing.`,
  '',
  ...(DEFAULTS
    ? [
        '| query | points | defaults on, settled: cold ms (object reads) | warm ms (median, min–max) |',
        '|---|---|---|---|',
        ...rowsAfter.map((r) => `| ${r.name} | ${r.points} | ${cell(r)} |`),
        '',
        '| at rest | raw segments + catalogs | rollups + their catalogs | rollups / raw |',
        '|---|---|---|---|',
        restRow('day objects (defaults on)', after),
      ]
    : [
        `- Then \`POST /v1/admin/compact\` folded every closed shard-day into one day object (${(compactMs / 1000).toFixed(1)} s: ${compact.days} days, ${compact.partsIn} parts in, ${compact.windows} windows), and \`POST /v1/admin/rollup\` rebuilt the rollups of the folded days (${(rollup2Ms / 1000).toFixed(1)} s, ${rollup2.objects} objects); the queries ran again.`,
        '',
        '| query | points | hour parts: cold ms (object reads) | warm ms (median, min–max) | day objects: cold ms (object reads) | warm ms (median, min–max) |',
        '|---|---|---|---|---|---|',
        ...rowsBefore.map((r, i) => {
          const a = rowsAfter[i];
          return `| ${r.name} | ${r.points}${a.points === r.points ? '' : ` / ${a.points}`} | ${cell(r)} | ${cell(a)} |`;
        }),
        '',
        '| at rest | raw segments + catalogs | rollups + their catalogs | rollups / raw |',
        '|---|---|---|---|',
        restRow('hour parts', before),
        restRow('day objects', after),
      ]),
  '',
  `On disk at the end ${(onDisk / 2 ** 20).toFixed(1)} MiB: the replaced hour parts and hourly rollups wait out their 10-minute delete grace, which the bench does not wait for.`,
].join('\n');
console.log(md);
if (process.env.BENCH_WRITE_DOC !== '0') {
  const doc = join(root, 'docs/benchmarks.md');
  const text = readFileSync(doc, 'utf8');
  const tag = `${METRICS ? 'rollup-bench-metrics' : 'rollup-bench'}${DEFAULTS ? '-defaults' : ''}`;
  const block = `<!-- ${tag}:start -->\n${md}\n<!-- ${tag}:end -->`;
  const re = new RegExp(`<!-- ${tag}:start -->[\\s\\S]*<!-- ${tag}:end -->`);
  writeFileSync(doc, re.test(text) ? text.replace(re, block) : `${text.trimEnd()}\n\n${block}\n`);
}
