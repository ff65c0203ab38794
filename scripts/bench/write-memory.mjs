// Bytes per active series that the write path leaves on the HTTP thread (issue 12, part 4): the
// cardinality bench's scrape rounds (BENCH_HOSTS × BENCH_METRICS series, one sample each, bodies
// of 50,000 series) through what POST /v1/write does in embedded mode (scan, parseWrite,
// admission with the embedded cardinality store, Writer.encode, the embedded hot tier's append),
// PROBE_ROUNDS times, then the heap plus array buffers after a full GC, over the series, against
// the same before the first round. Every structure that lives per series is in it: the write
// path's series caches, the admission's and the cardinality store's series maps, the hot tier's
// series, logs and key bytes. PROBE_SNAPSHOT=1 also writes a heap snapshot and prints what is
// held per series by V8 node type and name (self sizes; the top PROBE_TOP rows), and the heap objects
// (snapshot nodes) per series, against a snapshot taken before the first round. It also times one
// full (mark-compact) gc() after the rounds (wall and CPU), median of 5: the pause a major GC of that heap costs
// the HTTP thread, which grows with the live objects more than with their bytes (issue 12).
//
//   node --expose-gc scripts/bench/write-memory.mjs        (after `npm run build`)
//   knobs: BENCH_HOSTS (10000) BENCH_METRICS (20) PROBE_ROUNDS (3) PROBE_SNAPSHOT (0) PROBE_TOP (25)
//          PROBE_LIBS (the libs/ folder whose dist to load: another build's, for a before)
import { mkdtempSync, readFileSync, rmSync, createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { pathToFileURL } from 'node:url';

const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const HOSTS = num('BENCH_HOSTS', 10_000);
const METRICS = num('BENCH_METRICS', 20);
const ROUNDS = num('PROBE_ROUNDS', 3);
const SERIES = HOSTS * METRICS;
const BATCH = 50_000;
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const libs = resolve(env.PROBE_LIBS ?? new URL('../../libs', import.meta.url).pathname);
const lib = (name) => import(pathToFileURL(join(libs, name, 'dist/index.js')).href);
const { Admission, Writer, parseWrite, releaseBody, runSteps, scanSeriesSteps, sizeSeriesCaches } = await lib('engine');
const { EmbeddedHotTier, MemoryCardinalityStore } = await lib('storage');
const { NamespaceSet } = await lib('core');
const { loadConfig, policyDefaults, singleNamespace } = await lib('config');

// A generation of the series caches holds every series, as the cardinality bench sets S4_SERIES_CACHE_ENTRIES.
sizeSeriesCaches(SERIES);
const config = loadConfig({ S4_MAX_SAMPLES_PER_REQUEST: String(Math.max(1_000_000, BATCH)) });
const policies = new NamespaceSet(singleNamespace(policyDefaults(config)));
const dir = mkdtempSync(join(tmpdir(), 's4-write-memory-'));
const hot = await EmbeddedHotTier.open({ dir, fsync: 'never' });
const route = (metric) => {
  const p = policies.resolve(metric);
  return { ns: p.name, shards: p.shards, maxRecordBytes: p.limits.maxRecordBytes };
};
const writer = new Writer(hot, { ns: config.namespace, shards: config.shards, maxRecordBytes: config.limits.maxRecordBytes, route });
const admission = new Admission(new MemoryCardinalityStore(), () => policies);

/** Series [from, to) of round r as cardinality.mjs sends them. */
function body(r, from, to, ts) {
  const parts = [];
  for (let i = from; i < to; i++) {
    const h = Math.floor(i / METRICS);
    parts.push(`{"metric":"node_m${i % METRICS}","tags":{"host":"host-${h}","dc":"dc-${h % 8}"},"ts":[${ts}],"fields":{"value":[${(i * 7 + r) % 10_000}.25]}}`);
  }
  return Buffer.from(`{"series":[${parts.join(',')}]}`);
}

const heap = () => {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
};

/** One request, in a function of its own: nothing of it stays reachable once it has returned. */
async function write(r, from, ts) {
  const scanned = runSteps(scanSeriesSteps(body(r, from, Math.min(SERIES, from + BATCH), ts)));
  if (!scanned) throw new Error('the body did not take the scanned path');
  const input = { kind: 'scanned', scanned };
  const series = parseWrite(input, config.limits, Date.now());
  releaseBody(input);
  await admission.admit(series, Date.now());
  await writer.commit(writer.encode(series));
}

/**
 * One full gc()'s wall ms and CPU ms (the process's, so V8's helper threads' marking too; steadier
 * than wall on a shared machine), medians of 5 (each after a first gc(), so it marks the live heap only).
 */
const fullGc = () => {
  const wall = [];
  const cpu = [];
  for (let i = 0; i < 5; i++) {
    globalThis.gc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    globalThis.gc();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const median = (a) => +a.sort((x, y) => x - y)[2].toFixed(1);
  return { wall: median(wall), cpu: median(cpu) };
};

const snapshots = env.PROBE_SNAPSHOT === '1';
const nodesBefore = snapshots ? await nodeCount(writeHeapSnapshot(join(dir, 'before.heapsnapshot'))) : 0;
const gcBefore = fullGc();
const now = Date.now();
const before = heap();
const c0 = process.cpuUsage();
for (let r = 0; r < ROUNDS; r++) for (let b = 0; b < SERIES; b += BATCH) await write(r, b, now - (ROUNDS - r) * 10_000);
const c = process.cpuUsage(c0);
const after = heap();
const gcAfter = fullGc();
const per = (v) => Math.round(v / SERIES);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  JSON.stringify({
    series: SERIES,
    rounds: ROUNDS,
    libs,
    bytesPerSeries: per(after.heap + after.buffers - before.heap - before.buffers),
    heapPerSeries: per(after.heap - before.heap),
    arrayBuffersPerSeries: per(after.buffers - before.buffers),
    cpuUsPerSeriesRound: +((c.user + c.system) / (SERIES * ROUNDS)).toFixed(2),
    fullGcMs: gcAfter.wall,
    fullGcCpuMs: gcAfter.cpu,
    fullGcMsBefore: gcBefore.wall,
    rssMB: Math.round(process.memoryUsage().rss / 2 ** 20),
    load,
  }),
);

if (snapshots) {
  const file = writeHeapSnapshot(join(dir, 'write.heapsnapshot'));
  await summarize(file, num('PROBE_TOP', 25), nodesBefore);
}
await hot.close();
rmSync(dir, { recursive: true, force: true });

async function readSnapshot(file) {
  const chunks = [];
  for await (const chunk of createReadStream(file)) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function nodeCount(file) {
  const snap = await readSnapshot(file);
  return snap.nodes.length / snap.snapshot.meta.node_fields.length;
}

/** Self bytes and counts per (node type, name) of a heap snapshot, per series, largest first; then the most numerous. */
async function summarize(file, top, nodesBefore) {
  const snap = await readSnapshot(file);
  const meta = snap.snapshot.meta;
  const F = meta.node_fields.length;
  const iType = meta.node_fields.indexOf('type');
  const iName = meta.node_fields.indexOf('name');
  const iSize = meta.node_fields.indexOf('self_size');
  const types = meta.node_types[0];
  const rows = new Map();
  const nodes = snap.nodes;
  for (let i = 0; i < nodes.length; i += F) {
    const type = types[nodes[i + iType]];
    let name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : snap.strings[nodes[i + iName]];
    if (name.length > 40) name = name.slice(0, 40);
    const k = `${type} ${name}`;
    const row = rows.get(k) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += nodes[i + iSize];
    rows.set(k, row);
  }
  const row = ([k, v]) => ({ node: k, perSeries: +(v.count / SERIES).toFixed(2), bytesPerSeries: +(v.bytes / SERIES).toFixed(1) });
  const nodesAfter = nodes.length / F;
  console.log(JSON.stringify({ heapObjectsPerSeries: +((nodesAfter - nodesBefore) / SERIES).toFixed(2), nodesBefore, nodesAfter }));
  console.table([...rows].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top).map(row));
  console.table([...rows].sort((a, b) => b[1].count - a[1].count).slice(0, 12).map(row));
  // Plain objects and arrays by what holds them (the first retaining edge's name and holder) and, for objects, their property names.
  const E = meta.edge_fields.length;
  const iEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const edgeTypes = meta.edge_types[0];
  const nodeName = (i) => `${types[nodes[i + iType]]} ${snap.strings[nodes[i + iName]]}`.slice(0, 40);
  const holder = new Map();
  const props = new Map();
  for (let i = 0, e = 0; i < nodes.length; i += F) {
    const own = [];
    for (let k = 0; k < nodes[i + iEdges]; k++, e += E) {
      const t = edgeTypes[snap.edges[e + eType]];
      const to = snap.edges[e + eTo];
      const label = t === 'element' || t === 'hidden' ? `[${t}]` : snap.strings[snap.edges[e + eName]];
      if (t === 'property') own.push(label);
      if (!holder.has(to) && t !== 'weak' && t !== 'shortcut') holder.set(to, `${nodeName(i)} .${label}`);
    }
    if (nodeName(i) === 'object Object') props.set(i, own.join(','));
    if (nodeName(i) === 'object Object') for (let k = 0, e2 = e - nodes[i + iEdges] * E; k < nodes[i + iEdges]; k++, e2 += E) if (nodeName(snap.edges[e2 + eTo]) === 'number heap number') holder.set(snap.edges[e2 + eTo], `object {${own.join(',')}} .${snap.strings[snap.edges[e2 + eName]] ?? '?'}`);
  }
  const by = new Map();
  for (let i = 0; i < nodes.length; i += F) {
    const n = nodeName(i);
    if (n !== 'object Object' && n !== 'object Array' && n !== 'number heap number' && n !== 'object Buffer') continue;
    const k = `${n} {${props.get(i) ?? ''}} ← ${holder.get(i) ?? '?'}`;
    by.set(k, (by.get(k) ?? 0) + 1);
  }
  const shapes = [...by].filter(([, c]) => c >= SERIES / 20).sort((a, b) => b[1] - a[1]);
  console.table(shapes.map(([k, c]) => ({ what: k.slice(0, 110), perSeries: +(c / SERIES).toFixed(2) })));
}
