// The embedded hot tier's side of a flush at many series (issue 12): releasing a shard-window's flushed logs,
// and the log rewrite that follows once released bytes dominate the file. 60,000 series (20 metrics × 3,000
// hosts) per shard, 20-byte appends as a scrape writes them, fsync on (S4's default).
//   release: 3 rounds of 6 appends per series in one shard, each round's logs then released whole in calls of 500
//            logs (as the flusher releases them: RELEASE_SLICE in libs/engine/src/flush/flusher.ts); CPU per log.
//   rewrite: 16 shards × 60,000 live logs of 6 appends, rewritten once; CPU per log and wall time.
// Usage: npm run build && node scripts/bench/hot-release.mjs [repo root of a build to compare, default this one] [series per shard]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const N = Number(process.argv[3] ?? 60_000);
const { EmbeddedHotTier } = await import(`${root}/libs/storage/dist/embedded/index.js`);
const { seriesId } = await import(`${root}/libs/core/dist/index.js`);
const keys = Array.from({ length: N }, (_, i) => ({ metric: `m${i % 20}`, tags: { host: `host-${Math.floor(i / 20)}`, dc: 'eu-1' } }));
const ids = keys.map(seriesId);
const data = Uint8Array.from({ length: 20 }, (_, i) => i + 1);
const appendRound = (tier, ref) => tier.append(keys.map((key, i) => ({ ref, window: 0, id: ids[i], key, data })));
const cpu = (from) => {
  const c = process.cpuUsage(from);
  return c.user + c.system;
};

{
  const dir = mkdtempSync(join(tmpdir(), 's4-hot-release-'));
  const tier = await EmbeddedHotTier.open({ dir, fsync: 'always', now: () => 0 });
  const ref = { ns: 'default', shard: 0 };
  const lease = await tier.acquireLease(ref, 'bench', 600_000);
  let us = 0;
  let logs = 0;
  for (let r = 0; r < 3; r++) {
    for (let k = 0; k < 6; k++) await appendRound(tier, ref);
    const read = await tier.readWindow(ref, 0);
    const c0 = process.cpuUsage();
    const cursors = read.map((l) => ({ id: l.id, length: l.data.length }));
    for (let i = 0; i < cursors.length; i += 500) await tier.release(lease, 0, cursors.slice(i, i + 500));
    us += cpu(c0);
    logs += read.length;
  }
  console.log(`release: ${(us / logs).toFixed(2)} µs CPU per log (${logs} logs)`);
  await tier.close();
  rmSync(dir, { recursive: true, force: true });
}

{
  const dir = mkdtempSync(join(tmpdir(), 's4-hot-rewrite-'));
  // No rewrite on its own (slack never reached): the one below is timed alone.
  const tier = await EmbeddedHotTier.open({ dir, fsync: 'always', now: () => 0, compactSlackBytes: 1e15 });
  for (let s = 0; s < 16; s++) for (let k = 0; k < 6; k++) await appendRound(tier, { ns: 'default', shard: s });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await tier['compact']();
  const us = cpu(c0);
  console.log(`rewrite: ${(us / (16 * N)).toFixed(2)} µs CPU per log, ${(performance.now() - t0).toFixed(0)} ms wall (${16 * N} logs)`);
  await tier.close();
  rmSync(dir, { recursive: true, force: true });
}
