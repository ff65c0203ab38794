// Rollup bytes against raw bytes, old layout against new, on the same data in one run (issue 12).
// No server: the shapes of scripts/bench/rollups.mjs are encoded with the format library, once as
// the aggregation worker wrote them before 2026-11-23 (hourly objects, 1 min and 1 h for every
// series, absolute first/last times) and once as it writes them now (each resolution only where
// its buckets average ≥ 20 samples, offsets for first/last, closed days in one day object), beside
// the raw segments as hour parts and as one day object.
// Usage: npm run build && node scripts/bench/rollup-sizes.mjs   (env: BENCH_SENSORS (20), BENCH_HOSTS (25))
import { bucketsToColumns, encodeSegment, ROLLUP_COLUMNS_V1 } from '../../libs/format/dist/index.js';
import { bucketize } from '../../libs/engine/dist/index.js';
import { generate, prng } from './lib/dataset.mjs';
import { machine } from './lib/proc.mjs';

const H = 3_600_000;
const DAY = 24 * H;
const START = Date.UTC(2026, 8, 1);
const RES = { '1m': 60_000, '1h': H };

function sensors(n) {
  return generate({ sensors: n, hours: 24, start: START }).sensors.map((s, i) => ({ id: `s${String(i).padStart(15, '0')}`, metric: 'bench.value', tags: { sensor: s.name }, ts: [...s.ts], value: [...s.value] }));
}
/** The metrics shape of rollups.mjs: 20 metrics per host every 10 s, half gauges, half counters. */
function metrics(hosts) {
  const out = [];
  for (let h = 0; h < hosts; h++)
    for (let m = 0; m < 20; m++) {
      const rnd = prng(20261123 + h * 1000 + m * 7);
      const phase = Math.floor(prng(h + 1)() * 10_000);
      const counter = m % 2 === 1;
      let v = counter ? (h + 1) * 1e6 : 50 + (rnd() - 0.5) * 40;
      const ts = [];
      const value = [];
      for (let i = 0; i < 8640; i++) {
        ts.push(START + phase + i * 10_000 + (rnd() < 0.1 ? Math.floor(rnd() * 5) : 0));
        if (counter) v += Math.floor(rnd() * 500);
        else v = Math.min(100, Math.max(0, v + (rnd() - 0.5) * 4));
        value.push(counter ? v : Math.round(v * 10) / 10);
      }
      out.push({ id: `h${String(h).padStart(5, '0')}m${String(m).padStart(9, '0')}`, metric: `node.m${m}`, tags: { host: `host-${h}` }, ts, value });
    }
  return out;
}

const slice = (s, from, to) => {
  const a = s.ts.findIndex((t) => t >= from);
  let b = s.ts.findIndex((t) => t >= to);
  if (b < 0) b = s.ts.length;
  return a < 0 ? { ts: [], value: [] } : { ts: s.ts.slice(a, b), value: s.value.slice(a, b) };
};
const size = (window, series) => encodeSegment({ ns: 'b', shard: 0, window, series }).length;
const hours = Array.from({ length: 24 }, (_, i) => START + i * H);

function v1Columns(buckets) {
  const fields = {};
  for (const c of ROLLUP_COLUMNS_V1) fields[`value.${c}`] = buckets.map((b) => b[c]);
  return { ts: buckets.map((b) => b.start), fields };
}

function measure(series) {
  const samples = series.reduce((n, s) => n + s.ts.length, 0);
  const rawHour = hours.reduce((n, w) => n + size(w, series.map((s) => { const x = slice(s, w, w + H); return { id: s.id, metric: s.metric, tags: s.tags, ts: x.ts, fields: { value: x.value } }; }).filter((s) => s.ts.length > 0)), 0);
  const rawDay = size(START, series.map((s) => ({ id: s.id, metric: s.metric, tags: s.tags, ts: s.ts, fields: { value: s.value } })));
  // Before: hourly objects with 1 min and 1 h for every series, absolute times (and a day object of the 1 h rows).
  let old = 0;
  for (const w of hours) {
    const list = [];
    for (const s of series) {
      const x = slice(s, w, w + H);
      for (const [name, ms] of Object.entries(RES)) {
        const b = bucketize(x.ts, x.value, ms);
        if (b.length > 0) list.push({ id: `${s.id}.${name}`, metric: s.metric, tags: s.tags, ...v1Columns(b) });
      }
    }
    old += size(w, list);
  }
  old += size(START, series.map((s) => ({ id: `${s.id}.1h`, metric: s.metric, tags: s.tags, ...v1Columns(bucketize(s.ts, s.value, H)) })));
  // Now, a closed day: one day object, each resolution only where it pays (rollup.md).
  const list = [];
  for (const s of series) {
    let any = false;
    for (const [name, ms] of Object.entries(RES)) {
      const b = bucketize(s.ts, s.value, ms);
      if (s.ts.length < 4 * 5 * b.length) continue;
      any = true;
      list.push({ id: `${s.id}.${name}`, metric: s.metric, tags: s.tags, ...bucketsToColumns(new Map([['value', b]])) });
    }
    if (!any) list.push({ id: `${s.id}.raw`, metric: s.metric, tags: s.tags, ts: [], fields: {} });
  }
  const now = size(START, list);
  return { samples, rawHour, rawDay, old, now };
}

const m = machine();
console.log(`Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; \`node scripts/bench/rollup-sizes.mjs\`; ${m.cpu}, ${m.cores} cores (bytes only: the machine's load does not matter).`);
console.log('');
console.log('| shape (one day) | raw hour parts | raw day object | rollups before (hourly 1m + 1h, absolute times) | rollups now (day object, sized) |');
console.log('|---|---|---|---|---|');
for (const [name, series] of [
  [`${Number(process.env.BENCH_SENSORS ?? 20)} sensors × 1 Hz`, sensors(Number(process.env.BENCH_SENSORS ?? 20))],
  [`${Number(process.env.BENCH_HOSTS ?? 25)} hosts × 20 metrics × 10 s`, metrics(Number(process.env.BENCH_HOSTS ?? 25))],
]) {
  const r = measure(series);
  const b = (x) => `${(x / r.samples).toFixed(3)} B/sample`;
  console.log(`| ${name} | ${b(r.rawHour)} | ${b(r.rawDay)} | ${b(r.old)} = **${((100 * r.old) / r.rawHour).toFixed(0)} %** of hour parts | ${b(r.now)} = **${((100 * r.now) / r.rawDay).toFixed(1)} %** of the day object, ${((100 * r.now) / r.rawHour).toFixed(1)} % of hour parts |`);
}
