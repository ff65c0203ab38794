// What the compact role's pass costs in memory at many series (issue 12), on the data a
// cardinality bench kept: the bench's periodic compaction has folded each window already, so
// every catalog is put back to the parts its fold replaced (they stay on disk until their delete
// grace ends) and the series indexes are removed. Then, in a worker thread with the role threads'
// young generation (apps/api/src/roles/threads/role-thread.ts): the series index of every
// shard-day built from the parts' footers (as a pass after the flushes does), then the compact
// role's pass: window folds, then the indexes brought up to the folded catalogs. The thread's heap
// (used, and committed: what stays in the process RSS) and the process RSS are sampled every
// 20 ms. It works on a copy: the kept dir is left alone.
//
//   npm run build && BENCH_WORK=/tmp/b … npm run bench -- cardinality   (keeps $BENCH_WORK/card-embedded)
//   node scripts/bench/compact-memory.mjs /tmp/b/card-embedded/objects [ns (bench)] [shards (16)]
//
// BENCH_S4_DIST_LIBS=/other/checkout/libs runs another build's engine on the same data;
// BENCH_COMPACT_CONCURRENCY (2, as S4_COMPACT_CONCURRENCY).
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, workerData } from 'node:worker_threads';

const YOUNG_GENERATION_MB = 32; // as the role threads run
const libs = (isMainThread ? process.env.BENCH_S4_DIST_LIBS : workerData.libs) ?? new URL('../../libs', import.meta.url).pathname;
const { CatalogStore, Compactor, SeriesIndexBuilder } = await import(join(libs, 'engine/dist/index.js'));
const { EmbeddedHotTier, FilesystemObjectStore } = await import(join(libs, 'storage/dist/index.js'));
const mb = (n) => Math.round(n / 2 ** 20);

if (isMainThread) {
  const [src, ns = 'bench', shardsArg = '16'] = process.argv.slice(2);
  if (!src) {
    console.error('usage: node scripts/bench/compact-memory.mjs OBJECTS_DIR [NS] [SHARDS]');
    process.exit(2);
  }
  const { readSegmentFooter, readTrailer, SEGMENT_TRAILER_BYTES } = await import(join(libs, 'format/dist/index.js'));
  const work = mkdtempSync(join(tmpdir(), 's4-compact-memory-'));
  const objectsDir = join(work, 'objects');
  cpSync(src, objectsDir, { recursive: true });
  let removed = 0;
  const catDir = join(objectsDir, 'v1', ns, 'cat');
  for (const f of readdirSync(catDir, { recursive: true }))
    if (String(f).endsWith('.s4idx')) {
      rmSync(join(catDir, String(f)));
      removed++;
    }
  const objects = new FilesystemObjectStore(objectsDir);
  const catalogs = new CatalogStore(objects);
  const shards = Number(shardsArg);
  const hot = await EmbeddedHotTier.open({ dir: join(work, 'hot'), fsync: 'never', now: Date.now });
  let unfolded = 0;
  for (let shard = 0; shard < shards; shard++) {
    const ref = { ns, shard };
    for (const day of await catalogs.days(ref, 0)) {
      const { catalog } = await catalogs.load(ref, day);
      const entries = [];
      for (const e of catalog.entries) {
        const folder = e.key.split('/').slice(0, -1).join('/');
        const replaced = readdirSync(join(objectsDir, folder)).filter((f) => `${folder}/${f}` !== e.key);
        if (replaced.length < 2) {
          entries.push(e);
          continue;
        }
        for (const f of replaced) {
          const key = `${folder}/${f}`;
          const bytes = readFileSync(join(objectsDir, key));
          const footer = readSegmentFooter(bytes);
          const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
          const [, part, fence] = /p(\d+)-f(\d+)/.exec(f).map(Number);
          const counted = footer.series.filter((x) => x.count > 0);
          entries.push({ ...e, key, part, fence, size: bytes.length, footerOffset, footerLength, series: footer.series.length, samples: counted.reduce((n, x) => n + x.count, 0), minTs: Math.min(...counted.map((x) => x.minTs)), maxTs: Math.max(...counted.map((x) => x.maxTs)) });
          unfolded++;
        }
      }
      await catalogs.update(ref, day, (current) => ({ ...current, entries }));
    }
    // This hot tier's fences start at 1: moved above the bench's, or the fold would rank below its parts.
    for (let f = 0; f < 64; f++) {
      const lease = await hot.acquireLease(ref, `setup-${f}`, 1);
      if (lease) await hot.releaseLease(lease);
    }
  }
  await hot.close();
  await objects.close();
  console.log(`${src} copied to ${work}: ${removed} series indexes removed, ${unfolded} folded parts put back in the catalogs; ${shards} shards of ${ns}; engine ${libs}`);
  const worker = new Worker(new URL(import.meta.url), { workerData: { libs, work, ns, shards }, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
  await new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
  rmSync(work, { recursive: true, force: true });
} else {
  const { work, ns, shards } = workerData;
  const objects = new FilesystemObjectStore(join(work, 'objects'));
  const catalogs = new CatalogStore(objects);
  const now = Date.now() + 3 * 3_600_000; // past every window's settle time and the deletes' grace
  const clock = { now: () => now };
  const hot = await EmbeddedHotTier.open({ dir: join(work, 'hot'), fsync: 'never', now: clock.now });
  const concurrency = Number(process.env.BENCH_COMPACT_CONCURRENCY ?? 2);
  const measured = async (name, run) => {
    const start = { rss: process.memoryUsage().rss, cpu: process.cpuUsage() };
    let peak = { rss: start.rss, used: 0, committed: 0 };
    const sample = () => {
      const u = process.memoryUsage();
      peak = { rss: Math.max(peak.rss, u.rss), used: Math.max(peak.used, u.heapUsed), committed: Math.max(peak.committed, u.heapTotal) };
    };
    const sampler = setInterval(sample, 20);
    const t = performance.now();
    const stats = await run();
    const ms = performance.now() - t;
    clearInterval(sampler);
    sample();
    const cpu = process.cpuUsage(start.cpu);
    console.log(`${name}: ${(ms / 1000).toFixed(2)} s, thread CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s; thread heap peak used ${mb(peak.used)} MiB, committed ${mb(peak.committed)} MiB; process RSS ${mb(start.rss)} → peak ${mb(peak.rss)} MiB; ${JSON.stringify(stats)}`);
  };
  const indexes = new SeriesIndexBuilder(objects, catalogs, { ns, shards, clock, lookbackMs: 7 * 86_400_000, concurrency });
  await measured('series indexes of the parts (every footer)', () => indexes.buildAll());
  // BENCH_FOLD_GC=1 (with node --expose-gc): a full GC before each fold's upload, to see what a fold holds live.
  const folds = process.env.BENCH_FOLD_GC === '1' && global.gc ? new Proxy(objects, { get: (o, k) => (k === 'put' ? (key, body, c) => (key.endsWith('.s4seg') && global.gc(), o.put(key, body, c)) : typeof o[k] === 'function' ? o[k].bind(o) : o[k]) }) : objects;
  await measured('window folds', () => new Compactor(hot, folds, catalogs, { ns, shards, owner: 'bench', leaseTtlMs: 60_000, clock, settleMs: 0, dayAfterMs: 0, concurrency }).compactAll());
  await measured('series indexes after the folds', () => indexes.buildAll());
  await hot.close();
  await objects.close();
}
