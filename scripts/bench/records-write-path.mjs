// The records workload's HTTP-thread write path in one process, without HTTP: the bench's request
// bodies (`{"samples":[…]}` of BENCH_BATCH nested ~1.6 KB records, as records-ingest.mjs sends them)
// go through what POST /v1/write does with them before the hot tier: the JSON way (the body's text,
// JSON.parse, parseWrite's checks, Writer.encode's records) and the scanned way (scanSeriesSteps
// reading the bytes, packing each record's values straight into hot-log MessagePack; parseWrite;
// Writer.encode copying them). The two ways alternate, rounds of each; medians of CPU µs a record
// (process.cpuUsage: GC helper threads count too). Both ways' records are checked byte for byte.
//
//   npm run build --silent
//   node scripts/bench/records-write-path.mjs
//   knobs: BENCH_MACHINES (300) BENCH_BATCH (500 records a body) BENCH_BODIES (40) PROBE_ROUNDS (9)
//          PROBE_WAY (json, scanned, ndjson, ndjson-scanned, msgpack or msgpack-scanned, comma-separated: those ways only, e.g.
//          under --cpu-prof; the NDJSON ways send the same records a line each, msgpack the same body packed
//          as the SDK packs it, decoded by msgpackr (the path before
//          the MessagePack scan) or scanned as http/body.ts now reads it)
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { forEachRecord, machineName, plan, sdkMsgpackBodies } from './lib/records.mjs';

const env = process.env;
const libs = resolve(new URL('../../libs', import.meta.url).pathname);
const { Writer, parseWrite, runSteps, scanMsgpackSteps, scanSeriesSteps } = await import(pathToFileURL(join(libs, 'engine/dist/index.js')).href);
const { msgpack } = await import(pathToFileURL(join(libs, 'format/dist/index.js')).href);
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const MACHINES = num('BENCH_MACHINES', 300);
const BATCH = num('BENCH_BATCH', 500);
const BODIES = num('BENCH_BODIES', 40);
const ROUNDS = num('PROBE_ROUNDS', 9);

const end = Math.floor(Date.now() / 3_600_000) * 3_600_000;
const bodies = [];
/** The same records as NDJSON bodies. */
const lines = [];
let parts = [];
const p = plan({ machines: MACHINES, seconds: Math.ceil((BODIES * BATCH) / MACHINES), end });
forEachRecord(p, (m, ts, text) => {
  if (bodies.length === BODIES) return;
  parts.push(`{"metric":"machine.record","tags":{"machine":"${machineName(m)}"},"ts":${ts},"fields":${text}}`);
  if (parts.length === BATCH) {
    bodies.push(Buffer.from(`{"samples":[${parts.join(',')}]}`));
    lines.push(Buffer.from(`${parts.join('\n')}\n`));
    parts = [];
  }
});
const records = bodies.length * BATCH;
/** The same records as MessagePack bodies as the SDK sends a write (its Packr and columnar wire). */
const sdkBody = await sdkMsgpackBodies();
const packed = bodies.map((b) => sdkBody(JSON.parse(b.toString('utf8')).samples));
const limits = { maxSamplesPerRequest: 100_000, maxFieldsPerSample: 1000, maxTags: 32, maxTagLength: 1024, maxFutureMs: 600_000, maxNestingDepth: 64 };
const writer = new Writer(null, { ns: 'default', shards: 16, maxRecordBytes: 1 << 20 });
const now = Date.now();

const scannedWay = (ndjson) => (bytes) => {
  const scanned = runSteps(scanSeriesSteps(bytes, ndjson));
  if (!scanned) throw new Error('the scan did not take a body');
  return writer.encode(parseWrite({ kind: 'scanned', scanned }, limits, now));
};
const ways = {
  json: (bytes) => writer.encode(parseWrite({ kind: 'json', body: JSON.parse(bytes.toString('utf8')) }, limits, now)),
  scanned: scannedWay(false),
  ndjson: (bytes) => writer.encode(parseWrite({ kind: 'ndjson', text: bytes.toString('utf8') }, limits, now)),
  'ndjson-scanned': scannedWay(true),
  // What POST /v1/write did with a MessagePack body before it was scanned (msgpack.unpack, then the JSON body path).
  msgpack: (bytes) => writer.encode(parseWrite({ kind: 'json', body: msgpack.unpack(bytes) }, limits, now)),
  // And what it does now (http/body.ts: scanMsgpackSteps).
  'msgpack-scanned': (bytes) => {
    const scanned = runSteps(scanMsgpackSteps(bytes));
    if (!scanned) throw new Error('the scan did not take a MessagePack body');
    return writer.encode(parseWrite({ kind: 'scanned', scanned }, limits, now));
  },
};
/** The bodies of a way. */
const bodiesOf = (way) => (way.startsWith('ndjson') ? lines : way.startsWith('msgpack') ? packed : bodies);

/** A body's records as one byte string per (series, window), for the two ways' check. */
const bytesOf = (encoded) => encoded.appends.map((a) => `${a.id}@${a.window}:${Buffer.from(a.data).toString('hex')}`).sort().join('\n');
for (let k = 0; k < 3; k++) {
  const want = bytesOf(ways.json(bodies[k]));
  if (bytesOf(ways.scanned(bodies[k])) !== want || bytesOf(ways.ndjson(lines[k])) !== want || bytesOf(ways['ndjson-scanned'](lines[k])) !== want || bytesOf(ways.msgpack(packed[k])) !== want || bytesOf(ways['msgpack-scanned'](packed[k])) !== want) throw new Error('the ways encoded different records');
}

const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const times = { json: [], scanned: [], ndjson: [], 'ndjson-scanned': [], msgpack: [], 'msgpack-scanned': [] };
for (let r = 0; r < ROUNDS; r++)
  for (const way of env.PROBE_WAY ? env.PROBE_WAY.split(',') : ['json', 'scanned', 'msgpack', 'msgpack-scanned']) {
    const t0 = cpu();
    for (const b of bodiesOf(way)) ways[way](b);
    times[way].push((cpu() - t0) / records);
  }
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const jsonBytes = bodies.reduce((s, b) => s + b.length, 0) / records;
console.log(
  JSON.stringify({
    records,
    jsonBytesPerRecord: +jsonBytes.toFixed(0),
    usPerRecord: Object.fromEntries(Object.entries(times).filter(([, t]) => t.length).map(([w, t]) => [w, +median(t).toFixed(2)])),
    rounds: ROUNDS,
  }),
);
