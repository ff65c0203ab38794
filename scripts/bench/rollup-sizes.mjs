// Rollup bytes against raw bytes, old layouts against the new one, on the same data in one run
// (issue 12). No server: the shapes of scripts/bench/rollups.mjs are encoded with the format
// library as the aggregation worker wrote them before 2026-11-23 (hourly objects, 1 min and 1 h
// for every series, absolute first/last times), as column version 2 wrote a closed day (each
// resolution only where its buckets average ≥ 20 samples, an entry per series and resolution),
// and as it writes it now (column version 3: a keys block per metric, buckets of many series per
// block, sums split), beside the raw segments as hour parts and as one day object.
// Usage: npm run build && node scripts/bench/rollup-sizes.mjs   (env: BENCH_SENSORS (20), BENCH_HOSTS (25), BENCH_CHURN_HOSTS (125))
import { bucketsToColumns, encodeRollupObject, encodeSegment, ROLLUP_COLUMNS_V1 } from '../../libs/format/dist/index.js';
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

/**
 * The cardinality bench's shape (scripts/bench/cardinality.mjs) in one shard: 20 metrics × hosts,
 * 6 minutes at 10 s, two-decimal random walks, half of the hosts replaced half-way.
 */
function churn(hosts) {
  const out = [];
  const rnd = prng(7);
  const t0 = START + 54 * 60_000;
  for (let h = 0; h < hosts * 1.5; h++)
    for (let m = 0; m < 20; m++) {
      const [from, to] = h < hosts / 2 ? [0, 18] : h < hosts ? [0, 36] : [18, 36];
      let v = Math.round(rnd() * 10_000) / 100;
      const ts = [];
      const value = [];
      for (let r = from; r < to; r++) {
        ts.push(t0 + r * 10_000);
        value.push((v = Math.round((v + (rnd() - 0.5) * 2) * 100) / 100));
      }
      out.push({ id: `c${String(h).padStart(7, '0')}m${String(m).padStart(7, '0')}`, metric: `node_m${m}`, tags: { host: `host-${h}`, dc: `dc-${h % 8}` }, ts, value });
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
  // A closed day: one day object, each resolution only where it pays (rollup.md), as column
  // version 2 wrote it and as version 3 writes it.
  const list = [];
  const grouped = [];
  for (const s of series) {
    const byRes = new Map();
    for (const [name, ms] of Object.entries(RES)) {
      const b = bucketize(s.ts, s.value, ms);
      if (s.ts.length < 4 * 5 * b.length) continue;
      byRes.set(name, new Map([['value', b]]));
      list.push({ id: `${s.id}.${name}`, metric: s.metric, tags: s.tags, ...bucketsToColumns(new Map([['value', b]])) });
    }
    if (byRes.size === 0) list.push({ id: `${s.id}.raw`, metric: s.metric, tags: s.tags, ts: [], fields: {} });
    grouped.push({ metric: s.metric, tags: s.tags, byRes });
  }
  const v2 = size(START, list);
  const now = encodeRollupObject({ ns: 'b', shard: 0, window: START, series: grouped }).bytes.length;
  return { samples, rawHour, rawDay, old, v2, now };
}

const m = machine();
console.log(`Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; \`node scripts/bench/rollup-sizes.mjs\`; ${m.cpu}, ${m.cores} cores (bytes only: the machine's load does not matter).`);
console.log('');
console.log('| shape (one day) | raw hour parts | raw day object | rollups before (hourly 1m + 1h, absolute times) | column version 2 (day object, sized) | now: column version 3 (day object, sized) |');
console.log('|---|---|---|---|---|---|');
for (const [name, series] of [
  [`${Number(process.env.BENCH_SENSORS ?? 20)} sensors × 1 Hz`, sensors(Number(process.env.BENCH_SENSORS ?? 20))],
  [`${Number(process.env.BENCH_HOSTS ?? 25)} hosts × 20 metrics × 10 s`, metrics(Number(process.env.BENCH_HOSTS ?? 25))],
  [`cardinality: ${Number(process.env.BENCH_CHURN_HOSTS ?? 125)} hosts × 20 metrics × 10 s for 6 min, half replaced (one shard's share of the bench)`, churn(Number(process.env.BENCH_CHURN_HOSTS ?? 125))],
]) {
  const r = measure(series);
  const b = (x) => `${(x / r.samples).toFixed(3)} B/sample`;
  const pct = (x) => `${b(x)} = **${((100 * x) / r.rawDay).toFixed(1)} %** of the day object, ${((100 * x) / r.rawHour).toFixed(1)} % of hour parts`;
  console.log(`| ${name} | ${b(r.rawHour)} | ${b(r.rawDay)} | ${b(r.old)} = **${((100 * r.old) / r.rawHour).toFixed(0)} %** of hour parts | ${pct(r.v2)} | ${pct(r.now)} |`);
}
