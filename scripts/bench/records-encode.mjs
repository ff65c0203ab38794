// The records workload's CPU per record in the two format steps of its write path, in one process:
// the HTTP thread's RecordEncoder (one hot-log record per sample) and the segment thread's flush of a
// series-window (the log decoded, then encoded as a shredded segment). Records are the records bench's
// (scripts/bench/lib/records.mjs), one machine's hour at a time. Builds alternate, A then B, rounds of each;
// medians of CPU time (GC included).
//
//   npm run build --silent
//   node scripts/bench/records-encode.mjs [A=libs/format/dist] [B] [rounds=11]
// e.g. B = another checkout's libs/format/dist (the "before").
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forEachRecord, plan } from './lib/records.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const [aArg, bArg, roundsArg = '11'] = process.argv.slice(2);
const a = resolve(aArg ?? join(root, 'libs/format/dist'));
const b = bArg && resolve(bArg);
const rounds = Number(roundsArg);
const HOURS = 4;

const ts = [];
const recs = [];
forEachRecord(plan({ machines: 1, seconds: HOURS * 3600, end: Date.UTC(2026, 10, 1) + HOURS * 3_600_000 }), (m, t, text) => {
  ts.push(t);
  recs.push(JSON.parse(text));
});
const fields = Object.create(null);
for (const r of recs) for (const k of Object.keys(r)) fields[k] ??= null;
for (const k of Object.keys(fields)) fields[k] = recs.map((r) => (Object.hasOwn(r, k) ? r[k] : null));

async function load(dist, tag) {
  const records = await import(`${join(dist, 'hotlog/records.js')}?${tag}`);
  const index = await import(`${join(dist, 'index.js')}?${tag}`);
  return { RecordEncoder: records.RecordEncoder, decode: records.decodeRecordsToEncode ?? records.decodeRecords, encodeSegment: index.encodeSegment };
}

const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const cpu = (fn) => {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return c.user + c.system;
};

function measure(m) {
  // One hot log per hour, as the hot tier holds a series-window.
  const logs = [];
  const enc = [];
  for (let r = 0; r < rounds; r++) {
    logs.length = 0;
    enc.push(
      cpu(() => {
        const e = new m.RecordEncoder(1 << 20);
        for (let h = 0; h < HOURS; h++) {
          const parts = [];
          for (let i = h * 3600; i < (h + 1) * 3600; i++) {
            e.recordOf(ts[i], fields, i, 'm');
            parts.push(e.take());
          }
          logs.push(Buffer.concat(parts));
        }
      }) / ts.length,
    );
  }
  const flush = [];
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    bytes = 0;
    flush.push(
      cpu(() => {
        for (const log of logs) {
          const cols = m.decode(log);
          bytes += m.encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'machine.record', tags: { machine: 'm000' }, ts: cols.ts, fields: cols.fields }] }).length;
        }
      }) / ts.length,
    );
  }
  return { enc: median(enc), flush: median(flush), bytes: bytes / ts.length };
}

const builds = b ? [['A', await load(a, 'a')], ['B', await load(b, 'b')]] : [['A', await load(a, 'a')]];
console.log(`${ts.length} records (${HOURS} series-windows of 3,600), ${rounds} rounds each; A = ${a}${b ? `, B = ${b}` : ''}`);
for (let pass = 0; pass < 3; pass++) {
  for (const [name, m] of builds) {
    const r = measure(m);
    console.log(`${name}: RecordEncoder ${r.enc.toFixed(2)} µs/record, flush decode + segment encode ${r.flush.toFixed(2)} µs/record, ${r.bytes.toFixed(1)} B/record in the segment`);
  }
}
