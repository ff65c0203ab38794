// Compaction benchmark (issue 12): one shard-window of many late-data parts, folded by the
// compactor. Uses the engine directly (the compactor is not a server role yet): writes and
// flushes BENCH_PARTS parts of BENCH_SERIES series × BENCH_SAMPLES samples each into one hour
// window, measures the window's bytes and its queries (cold: a fresh engine; warm: median of
// BENCH_REPEATS), folds it, measures again, then lets the delete grace pass and checks that only
// the folded part is left.
// Usage: npm run build && node scripts/bench/compact.mjs
//   env: BENCH_PARTS (100) BENCH_SERIES (1000) BENCH_SAMPLES (10) BENCH_REPEATS (5)
//        BENCH_MODES (embedded; add redis+s3 with S4_REDIS_URL, S4_S3_ENDPOINT and AWS_* set,
//        e.g. from scripts/services/{redis,s3}.sh start) BENCH_WRITE_DOC (1: docs/bench-results/compact-latest.json)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CatalogStore, Compactor, Flusher, QueryEngine, Writer, parseWrite } from '../../libs/engine/dist/index.js';
import { EmbeddedHotTier, FilesystemObjectStore, RedisHotTier, S3ObjectStore } from '../../libs/storage/dist/index.js';
import { machine } from './lib/proc.mjs';
import { prng } from './lib/dataset.mjs';
import { median } from './lib/stats.mjs';

const PARTS = Number(process.env.BENCH_PARTS ?? 100);
const SERIES = Number(process.env.BENCH_SERIES ?? 1000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const MODES = (process.env.BENCH_MODES ?? 'embedded').split(',');
const H = 3_600_000;
const H0 = Date.UTC(2026, 9, 5, 6);
const LIMITS = { maxSamplesPerRequest: 1e8, maxFieldsPerSample: 10, maxTags: 10, maxTagLength: 100, maxFutureMs: 1e12, maxNestingDepth: 64 };
const root = new URL('../../', import.meta.url).pathname;

async function open(mode) {
  const ns = `bench${randomUUID().slice(0, 8)}`;
  if (mode === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 's4-compact-bench-'));
    let now = H0 + 2 * H;
    const clock = { now: () => now, set: (t) => (now = t) };
    return { ns, clock, hot: await EmbeddedHotTier.open({ dir: join(dir, 'hot'), fsync: 'never', now: clock.now }), objects: new FilesystemObjectStore(join(dir, 'objects')) };
  }
  if (!process.env.S4_REDIS_URL || !process.env.S4_S3_ENDPOINT) throw new Error('redis+s3 needs S4_REDIS_URL and S4_S3_ENDPOINT');
  const bucket = `s4-bench-${randomUUID().slice(0, 12)}`;
  const objects = new S3ObjectStore({ bucket, prefix: '', region: process.env.AWS_REGION ?? 'us-east-1', endpoint: process.env.S4_S3_ENDPOINT, forcePathStyle: true, maxSockets: 64 });
  await objects.ensureBucket();
  let now = H0 + 2 * H;
  const clock = { now: () => now, set: (t) => (now = t) };
  return { ns, clock, hot: new RedisHotTier(process.env.S4_REDIS_URL), objects };
}

/** Late data: part p carries samples p*SAMPLES … of every series, on a grid that fills the hour. */
function part(p, rnd) {
  const step = Math.floor(H / (PARTS * SAMPLES));
  const samples = [];
  for (let s = 0; s < SERIES; s++)
    for (let k = 0; k < SAMPLES; k++) samples.push({ metric: 'late.cpu', tags: { host: `h${String(s).padStart(4, '0')}`, dc: `dc${s % 4}` }, ts: H0 + (p * SAMPLES + k) * step, fields: { value: Math.round(rnd() * 1000) / 10 } });
  return samples;
}


async function windowBytes(objects, catalogs, ref) {
  const { catalog } = await catalogs.load(ref, Math.floor(H0 / 86_400_000) * 86_400_000);
  const entries = catalog.entries.filter((e) => e.window === H0);
  return { parts: entries.length, bytes: entries.reduce((n, e) => n + e.size, 0) };
}

async function queries(env, ref) {
  const engine = () => new QueryEngine(env.hot, env.objects, new CatalogStore(env.objects), { ns: env.ns, shards: 1, concurrency: 16, cacheBytes: 256 << 20 });
  const kinds = {
    'raw, all series': async (q) => { let n = 0; for await (const s of q.query({ metric: 'late.cpu', tags: {}, from: H0, to: H0 + H })) n += s.ts.length; return n; },
    'raw, one series': async (q) => { let n = 0; for await (const s of q.query({ metric: 'late.cpu', tags: { host: 'h0007' }, from: H0, to: H0 + H })) n += s.ts.length; return n; },
    'step 1 min, by dc': async (q) => (await q.aggregate({ metric: 'late.cpu', tags: {}, from: H0, to: H0 + H, step: 60_000, aggs: ['avg', 'max'], groupBy: ['dc'] })).length,
    latest: async (q) => (await q.latest({ metric: 'late.cpu', tags: {}, from: H0, to: H0 + H })).length,
  };
  const out = {};
  for (const [name, run] of Object.entries(kinds)) {
    const cold = engine();
    const t0 = performance.now();
    const result = await run(cold);
    const coldMs = performance.now() - t0;
    const reads = cold.counters.objectReads;
    const bytes = cold.counters.objectBytes;
    const warm = [];
    for (let i = 0; i < REPEATS; i++) {
      const t = performance.now();
      await run(cold);
      warm.push(performance.now() - t);
    }
    out[name] = { result, coldMs: round(coldMs), warmMs: round(median(warm)), coldObjectReads: reads, coldObjectBytes: bytes };
  }
  return out;
}

const round = (x) => Math.round(x * 10) / 10;

const results = { date: new Date().toISOString(), machine: machine(), parts: PARTS, series: SERIES, samplesPerSeriesPerPart: SAMPLES, modes: {} };
for (const mode of MODES) {
  const env = await open(mode);
  const ref = { ns: env.ns, shard: 0 };
  const catalogs = new CatalogStore(env.objects);
  const writer = new Writer(env.hot, { ns: env.ns, shards: 1, maxRecordBytes: 1 << 20 });
  const flusher = new Flusher(env.hot, env.objects, catalogs, { ns: env.ns, shards: 1, owner: 'bench', leaseTtlMs: 60_000, clock: env.clock });
  const rnd = prng(12);
  const t0 = performance.now();
  for (let p = 0; p < PARTS; p++) {
    await writer.write(parseWrite({ kind: 'json', body: { samples: part(p, rnd) } }, LIMITS, env.clock.now()));
    await flusher.flushAll(env.clock.now());
    if ((p + 1) % 20 === 0) process.stderr.write(`[${mode}] ${p + 1}/${PARTS} parts flushed\n`);
  }
  const loadMs = performance.now() - t0;
  const before = await windowBytes(env.objects, catalogs, ref);
  const qBefore = await queries(env, ref);

  env.clock.set(H0 + H + 11 * 60_000);
  const compactor = new Compactor(env.hot, env.objects, new CatalogStore(env.objects), { ns: env.ns, shards: 1, owner: 'bench', leaseTtlMs: 60_000, clock: env.clock });
  global.gc?.();
  const heap0 = process.memoryUsage();
  let peakRss = heap0.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const t1 = performance.now();
  const stats = await compactor.compactAll();
  const foldMs = performance.now() - t1;
  clearInterval(sampler);
  const after = await windowBytes(env.objects, catalogs, ref);
  const qAfter = await queries(env, ref);
  for (const k of Object.keys(qBefore)) if (qBefore[k].result !== qAfter[k].result) throw new Error(`${k}: ${qBefore[k].result} before the fold, ${qAfter[k].result} after`);

  env.clock.set(H0 + H + 30 * 60_000);
  const t2 = performance.now();
  const del = await compactor.compactAll();
  const deleteMs = performance.now() - t2;
  let left = 0;
  for await (const o of env.objects.list(`v1/${env.ns}/seg/`)) left += o.size;

  results.modes[mode] = {
    samples: stats.samples,
    loadAndFlushMs: round(loadMs),
    fold: { ms: round(foldMs), partsIn: stats.partsIn, bytesIn: stats.bytesIn, bytesOut: stats.bytesOut, rssGrowthMiB: round((peakRss - heap0.rss) / 2 ** 20) },
    before: { ...before, bytesPerSample: round(before.bytes / stats.samples), queries: qBefore },
    after: { ...after, bytesPerSample: round(after.bytes / stats.samples), queries: qAfter },
    deletePass: { ms: round(deleteMs), deleted: del.deleted, segmentBytesLeft: left },
  };
  const r = results.modes[mode];
  console.log(`\n## ${mode}: ${PARTS} parts × ${SERIES} series × ${SAMPLES} samples (${stats.samples} samples)`);
  console.log(`fold: ${r.fold.ms} ms, ${r.fold.partsIn} parts ${before.bytes} B → ${after.bytes} B (${round((100 * after.bytes) / before.bytes)} %), ${r.before.bytesPerSample} → ${r.after.bytesPerSample} B/sample, RSS +${r.fold.rssGrowthMiB} MiB`);
  console.log(`delete pass: ${r.deletePass.ms} ms, ${del.deleted} objects deleted, ${left} B of segments left`);
  console.log('| query | cold before | cold after | warm before | warm after | object reads before → after |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const k of Object.keys(qBefore)) console.log(`| ${k} | ${qBefore[k].coldMs} ms | ${qAfter[k].coldMs} ms | ${qBefore[k].warmMs} ms | ${qAfter[k].warmMs} ms | ${qBefore[k].coldObjectReads} → ${qAfter[k].coldObjectReads} |`);
  await env.hot.close();
  await env.objects.close();
}
if (process.env.BENCH_WRITE_DOC !== '0') writeFileSync(join(root, 'docs/bench-results/compact-latest.json'), `${JSON.stringify(results, null, 1)}\n`);
console.log(`\nmachine: ${JSON.stringify(results.machine)}`);
