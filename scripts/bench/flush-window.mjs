// The flusher's CPU for one shard-window of many series (issue 12): at 1 M active series a shard-window holds
// ~62,000–94,000 series with a few samples each. Writes BENCH_SERIES series (default 94,000) × 6 samples at
// 10 s into one shard of an embedded hot tier (fsync off: only the flush is timed), then flushes the window
// to a filesystem object store; prints the flush's CPU per series and its wall time.
// Usage: npm run build && node scripts/bench/flush-window.mjs [repo root of a build to compare, default this one]
// BENCH_PROFILE=FILE.cpuprofile also profiles the flush alone (inspector around `flushAll`); read it with
// `node scripts/bench/profile-summary.mjs FILE.cpuprofile 40`.
import { writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const N = Number(process.env.BENCH_SERIES ?? 94_000);
const { CatalogStore, Flusher, Writer, parseWrite } = await import(`${root}/libs/engine/dist/index.js`);
const { EmbeddedHotTier, FilesystemObjectStore } = await import(`${root}/libs/storage/dist/index.js`);
const dir = mkdtempSync(join(tmpdir(), 's4-flush-window-'));
const hot = await EmbeddedHotTier.open({ dir: join(dir, 'hot'), fsync: 'never' });
const objects = new FilesystemObjectStore(join(dir, 'objects'));
const opts = { ns: 'default', shards: 1 };
const H0 = Date.UTC(2026, 0, 1);
const clock = { now: () => H0 + 2 * 3_600_000 };
const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
const limits = { maxSamplesPerRequest: 1e7, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 };
for (let round = 0; round < 6; round++) {
  const series = Array.from({ length: N }, (_, i) => ({ metric: `node_m${i % 20}`, tags: { host: `host-${Math.floor(i / 20)}`, dc: `dc${i % 4}` }, ts: [H0 + round * 10_000], fields: { value: [Math.round(Math.random() * 1e4) / 100] } }));
  await writer.write(parseWrite({ kind: 'json', body: { series } }, limits, clock.now()));
}
const flusher = new Flusher(hot, objects, new CatalogStore(objects), { ...opts, owner: 'bench', leaseTtlMs: 600_000, clock });
const profile = process.env.BENCH_PROFILE;
let session;
if (profile) {
  const { Session } = await import('node:inspector/promises');
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
const c0 = process.cpuUsage();
const t0 = performance.now();
const stats = await flusher.flushAll(clock.now());
const c = process.cpuUsage(c0);
if (session) {
  const { profile: p } = await session.post('Profiler.stop');
  writeFileSync(profile, JSON.stringify(p));
  session.disconnect();
}
console.log(`flush of ${stats.series} series, ${stats.samples} samples: ${((c.user + c.system) / stats.series).toFixed(2)} µs CPU a series, ${(performance.now() - t0).toFixed(0)} ms wall`);
await hot.close();
rmSync(dir, { recursive: true, force: true });
