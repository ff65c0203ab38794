// Hot-tier scan cost (issue 12): 60,000 series (20 metrics × 3,000 hosts) of one window in 16 shards of the
// embedded tier, then the scan of one metric over every shard, as a selector query does; CPU per 16-shard scan.
// Usage: npm run build && node scripts/bench/hot-scan.mjs [repo root of a build to compare, default this one]
const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const { EmbeddedHotTier } = await import(`${root}/libs/storage/dist/embedded/index.js`);
const { seriesId, shardOf } = await import(`${root}/libs/core/dist/index.js`);
const { mkdtempSync, rmSync } = await import('node:fs');
const dir = mkdtempSync('/tmp/scanb-');
const tier = await EmbeddedHotTier.open({ dir, fsync: 'never' });
const W = 3_600_000 * 10;
const appends = [];
for (let h = 0; h < 3000; h++) for (let m = 0; m < 20; m++) {
  const key = { metric: `node_m${m}`, tags: { host: `host-${h}`, dc: `dc${h % 4}` } };
  const id = seriesId(key);
  appends.push({ ref: { ns: 'b', shard: shardOf(id, 16) }, window: W, id, key, data: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) });
}
await tier.append(appends);
const t0 = process.cpuUsage();
const N = 200;
let logs = 0;
for (let i = 0; i < N; i++) for (let s = 0; s < 16; s++) logs += (await tier.scan({ ns: 'b', shard: s }, 'node_m0', W, W + 3_600_000)).logs.length;
const c = process.cpuUsage(t0);
console.log(root, `${((c.user + c.system) / N / 1000).toFixed(2)} ms CPU per 16-shard scan, ${logs / N} logs`);
await tier.close();
rmSync(dir, { recursive: true, force: true });
