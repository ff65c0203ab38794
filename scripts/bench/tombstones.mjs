// Cost of tombstone checks on the benchmark's Q1–Q4 (issue 13): two S4 servers with the same
// data, one holding N tombstones on the queried metric that match none of its series (every
// query then fetches and checks them all, and step queries must check each rollup window), the
// other none; queries alternate between them so both see the same machine load.
//   node scripts/bench/tombstones.mjs   (after npm run build; embedded mode, S4 defaults on)
// Env: TOMB_SENSORS (50), TOMB_HOURS (24), TOMB_REPEATS (15), TOMB_COUNT (1000).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOUR, batches, generate } from './lib/dataset.mjs';
import { ok, waitHttp } from './lib/http.mjs';
import { machine, start, stop } from './lib/proc.mjs';
import { median } from './lib/stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const num = (k, d) => (process.env[k] ? Number(process.env[k]) : d);
const K = { sensors: num('TOMB_SENSORS', 50), hours: num('TOMB_HOURS', 24), repeats: num('TOMB_REPEATS', 15), tombstones: num('TOMB_COUNT', 1000) };
const METRIC = 'bench.value';
const log = (...a) => console.error(`[tombstones ${new Date().toISOString().slice(11, 19)}]`, ...a);

async function server(port) {
  const dir = mkdtempSync(join(tmpdir(), 's4-tomb-'));
  const env = { PATH: process.env.PATH, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_DATA_DIR: dir, S4_LOG_LEVEL: 'warn' };
  const child = start(process.execPath, [join(ROOT, 'apps/api/dist/main.js')], { env, log: join(dir, 's4.log') });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/readyz`);
  return { url, child };
}

const q = (o) => new URLSearchParams(Object.entries(o).map(([k, v]) => [k, String(v)])).toString();

const now = Date.now();
const startTs = Math.floor(now / HOUR) * HOUR - (K.hours + 1) * HOUR;
const ds = generate({ sensors: K.sensors, hours: K.hours, start: startTs });
const a = await server(18581);
const b = await server(18582);
try {
  for (const s of [a, b]) {
    for (const batch of batches(ds, 50_000)) {
      const lines = [];
      for (const p of batch.parts) for (let i = 0; i < p.ts.length; i++) lines.push(`{"metric":"${METRIC}","tags":{"sensor":"${p.name}"},"ts":${p.ts[i]},"fields":{"value":${p.value[i]}}}`);
      await ok(`${s.url}/v1/write`, { body: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
    }
    await ok(`${s.url}/v1/admin/flush`, { body: '{}', headers: { 'content-type': 'application/json' } });
    await ok(`${s.url}/v1/admin/rollup`, { body: '{}', headers: { 'content-type': 'application/json' } });
  }
  log(`loaded ${ds.sensors.length} sensors × ${K.hours} h into both servers`);
  for (let i = 0; i < K.tombstones; i++) await ok(`${b.url}/v1/series?${q({ metric: METRIC, tag: `sensor:ghost-${i}`, from: startTs + (i % K.hours) * HOUR, to: startTs + ((i % K.hours) + 1) * HOUR })}`, { method: 'DELETE' });
  log(`${K.tombstones} tombstones in server B`);

  const sensor = ds.sensors[0].name;
  const day = { from: ds.start, to: ds.end };
  const mid = ds.start + Math.floor(K.hours / 2) * HOUR;
  const queries = [
    ['Q1 raw, one sensor × 24 h, msgpack', `/v1/query?${q({ metric: METRIC, tag: `sensor:${sensor}`, ...day, format: 'msgpack' })}`],
    ['Q2 raw, all sensors × 1 h, msgpack', `/v1/query?${q({ metric: METRIC, from: mid, to: mid + HOUR, format: 'msgpack' })}`],
    ['Q3 one sensor, 1-min avg/min/max × 24 h', `/v1/query?${q({ metric: METRIC, tag: `sensor:${sensor}`, ...day, step: '1m', agg: 'avg,min,max' })}`],
    ['Q4 all sensors, 1-h avg × 24 h', `/v1/query?${q({ metric: METRIC, ...day, step: '1h', agg: 'avg' })}`],
  ];
  const time = async (url) => {
    const t = performance.now();
    await ok(url);
    return performance.now() - t;
  };
  for (const [, path] of queries) for (let i = 0; i < 3; i++) for (const s of [a, b]) await time(`${s.url}${path}`);
  const rows = [];
  for (const [name, path] of queries) {
    const ta = [];
    const tb = [];
    for (let r = 0; r < K.repeats; r++) {
      // Alternate which server goes first, so neither always meets a warmer machine.
      if (r % 2 === 0) {
        ta.push(await time(`${a.url}${path}`));
        tb.push(await time(`${b.url}${path}`));
      } else {
        tb.push(await time(`${b.url}${path}`));
        ta.push(await time(`${a.url}${path}`));
      }
    }
    const ma = median(ta);
    const mb = median(tb);
    rows.push({ name, none: ma, with: mb, ratio: mb / ma });
  }
  const m = machine();
  console.log(`Tombstone checks, ${new Date().toISOString().slice(0, 10)}, ${m.cpu} × ${m.cores}, ${m.ramGiB} GiB, Node ${m.node}; embedded; ${K.sensors} sensors × ${K.hours} h, 1 s samples; ${K.tombstones} tombstones on the queried metric matching none of its series; median of ${K.repeats}, servers alternated`);
  console.log('| query | no tombstones | 1,000 tombstones | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows) console.log(`| ${r.name} | ${r.none.toFixed(1)} ms | ${r.with.toFixed(1)} ms | ${r.ratio.toFixed(2)} |`);
} finally {
  await stop(a.child);
  await stop(b.child);
}
