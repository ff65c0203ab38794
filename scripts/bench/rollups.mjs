// Rollup benchmark (issue 3): S4 embedded, 200 sensors × 1 Hz × 7 days by default.
// Loads day by day (flushing after each day, as the segment worker would), builds rollups,
// restarts the server so the first query of each kind is cold, then measures each query cold
// (once) and warm (median of BENCH_REPEATS) with the object reads it needed (from /metrics).
// Usage: npm run build && node scripts/bench/rollups.mjs   (env: BENCH_SENSORS, BENCH_DAYS, BENCH_REPEATS, BENCH_WRITE_DOC=0)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';
import { generate, HOUR } from './lib/dataset.mjs';
import { ok, waitHttp } from './lib/http.mjs';
import { dirBytes, machine, start, stop } from './lib/proc.mjs';
import { summary } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
const { Packr, Unpackr } = require('msgpackr');
const packr = new Packr({ useRecords: false, moreTypes: true });
const unpackr = new Unpackr({ moreTypes: true, mapsAsObjects: true, int64AsType: 'number', useRecords: false });

const SENSORS = Number(process.env.BENCH_SENSORS ?? 200);
const DAYS = Number(process.env.BENCH_DAYS ?? 7);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 7);
const START = Date.UTC(2026, 8, 1);
const DAY = 24 * HOUR;
const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 's4-rollup-bench-'));
const port = 18000 + Math.floor(Math.random() * 1000);
const url = `http://127.0.0.1:${port}`;
const env = { ...process.env, S4_DATA_DIR: dir, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn', S4_FLUSH_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000' };

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
for (let d = 0; d < DAYS; d++) {
  const ds = generate({ sensors: SENSORS, hours: 24, start: START + d * DAY, seed: 20240601 + d });
  const t0 = performance.now();
  for (let i = 0; i < ds.sensors.length; i += 10) {
    const series = ds.sensors.slice(i, i + 10).map((s) => ({ metric: 'bench.value', tags: { sensor: s.name }, ts: s.ts, fields: { value: s.value } }));
    await ok(`${url}/v1/write`, { body: packr.pack({ series }), headers: { 'content-type': 'application/msgpack' } });
  }
  const t1 = performance.now();
  await ok(`${url}/v1/admin/flush`, { method: 'POST' });
  loadMs += t1 - t0;
  flushMs += performance.now() - t1;
  process.stderr.write(`day ${d + 1}/${DAYS} loaded\n`);
}
const t2 = performance.now();
const rollup = JSON.parse((await ok(`${url}/v1/admin/rollup`, { method: 'POST' })).body.toString());
const rollupMs = performance.now() - t2;
await stop(server);
await boot();

const end = START + DAYS * DAY;
const sensor = 's007';
const queries = [
  ['one sensor, whole range, 1-h avg', `metric=bench.value&tag=sensor:${sensor}&from=${START}&to=${end}&step=1h&agg=avg`],
  ['all sensors, whole range, 1-h avg', `metric=bench.value&from=${START}&to=${end}&step=1h&agg=avg`],
  ['one sensor, one day, 1-min min/max/avg', `metric=bench.value&tag=sensor:${sensor}&from=${START + 3 * DAY}&to=${START + 4 * DAY}&step=1m&agg=min,max,avg`],
  ['one sensor, one raw day, maxPoints=1000', `metric=bench.value&tag=sensor:${sensor}&from=${START + 3 * DAY}&to=${START + 4 * DAY}&maxPoints=1000&format=msgpack`],
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
const rows = [];
for (const [name, q] of queries) {
  const cold = await run(q);
  const warm = [];
  for (let i = 0; i < REPEATS; i++) warm.push(await run(q));
  rows.push({ name, cold, warm: summary(warm.map((w) => w.ms)), warmReads: warm[warm.length - 1].reads, points: cold.points });
}
await stop(server);

const seg = dirBytes(join(dir, 'objects/v1/default/seg')).bytes + dirBytes(join(dir, 'objects/v1/default/cat')).bytes;
const rol = dirBytes(join(dir, 'objects/v1/default/rollup')).bytes;
const samples = SENSORS * DAYS * 86_400;
const m = machine();
let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
} catch {}
const f = (ms) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));
const md = [
  `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on commit \`${commit}\`; command \`node scripts/bench/rollups.mjs\` (after \`npm run build\`).`,
  '',
  `- Machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB; Node ${m.node}. S4 embedded (filesystem object store).`,
  `- Dataset: ${SENSORS} sensors × 1 Hz × ${DAYS} days (nominal ${(samples / 1e6).toFixed(1)} M samples, random walk, 2 decimals, jitter and gaps as in the main bench). Load ${(loadMs / 1000).toFixed(1)} s, flushes ${(flushMs / 1000).toFixed(1)} s, rollup build ${(rollupMs / 1000).toFixed(1)} s (${rollup.objects} objects).`,
  `- Each query: once right after a restart (cold: empty footer/block cache), then ${REPEATS} times warm (median, min–max). Client time includes transfer and parsing.`,
  '',
  '| query | points | cold ms | cold object reads | warm ms (median, min–max) | warm object reads |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.name} | ${r.points} | ${f(r.cold.ms)} | ${r.cold.reads} | ${f(r.warm.median)} (${f(r.warm.min)}–${f(r.warm.max)}) | ${r.warmReads} |`),
  '',
  `Storage: segments + catalogs ${(seg / 2 ** 20).toFixed(1)} MiB (${(seg / samples).toFixed(3)} B/sample); rollups ${(rol / 2 ** 20).toFixed(1)} MiB = **${((100 * rol) / seg).toFixed(0)} %** of raw bytes.`,
].join('\n');
console.log(md);
if (process.env.BENCH_WRITE_DOC !== '0') {
  const doc = join(root, 'docs/benchmarks.md');
  const text = readFileSync(doc, 'utf8');
  const block = `<!-- rollup-bench:start -->\n${md}\n<!-- rollup-bench:end -->`;
  writeFileSync(doc, text.includes('<!-- rollup-bench:start -->') ? text.replace(/<!-- rollup-bench:start -->[\s\S]*<!-- rollup-bench:end -->/, block) : `${text.trimEnd()}\n\n## Rollups (issue 3)\n\n${block}\n`);
}
