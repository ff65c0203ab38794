import { describe, expect, it } from 'vitest';
import { shardOf, seriesId, type HotTier, type ObjectStore, type SeriesKey } from '@s4/core';
import { CatalogStore, Flusher, HealthReader, ROLLUP_DEFAULTS, RollupBuilder, Writer, parseWrite } from '@s4/engine';
import { EmbeddedHotTier, FilesystemObjectStore, RedisHotTier } from '@s4/storage';
import { freshBucket, redisUrl, tempDir, uniqueNamespace } from '../support/servers.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 2, 1);
const SHARDS = 2;
const LIMITS = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 10, maxTags: 10, maxTagLength: 100, maxFutureMs: 1e9, maxNestingDepth: 64 };

type Stores = (now: () => number) => Promise<{ hot: HotTier; objects: ObjectStore }>;
const STORES: [string, Stores][] = [
  [
    'embedded',
    async (now) => {
      const dir = tempDir('health');
      return { hot: await EmbeddedHotTier.open({ dir: `${dir}/hot`, fsync: 'never', now }), objects: new FilesystemObjectStore(`${dir}/objects`) };
    },
  ],
  ['redis+s3', async () => ({ hot: new RedisHotTier(redisUrl()), objects: (await freshBucket()).store })],
];

/** The engine with a clock the test moves, and the health reader beside it as the API wires it. */
async function engine(stores: Stores) {
  let now = H0 + 3 * H + 30 * 60_000;
  const clock = { now: () => now };
  const { hot, objects } = await stores(clock.now);
  const segments = new CatalogStore(objects);
  const rollupCatalogs = new CatalogStore(objects, 'rollup');
  const opts = { ns: uniqueNamespace(), shards: SHARDS };
  const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 20 });
  return {
    ns: opts.ns,
    hot,
    objects,
    clock,
    advance: (ms: number) => (now += ms),
    write: (key: SeriesKey, ts: number[]) => writer.write(parseWrite({ kind: 'json', body: { series: [{ ...key, ts, fields: { value: ts.map((t) => t % 1000) } }] } }, LIMITS, now)),
    flusher: new Flusher(hot, objects, segments, { ...opts, owner: 'test', leaseTtlMs: 60_000, clock }),
    rollups: new RollupBuilder(hot, objects, segments, rollupCatalogs, { ...opts, clock }),
    // Its own catalog stores, as in api.root.ts.
    health: new HealthReader(hot, new CatalogStore(objects), new CatalogStore(objects, 'rollup'), { ...opts, clock, lookbackMs: 7 * 86_400_000 }),
  };
}

describe.each(STORES)('HealthReader: per-shard state from the hot tier and the catalogs: %s', (_name, stores) => {
  it('follows hot bytes, flush lag, parts per window and rollup freshness through flushes, late data and rollups', async () => {
    const e = await engine(stores);
    const key: SeriesKey = { metric: 'm', tags: { host: 'a' } };
    const shard = shardOf(seriesId(key), SHARDS);
    const other = 1 - shard;
    // Two closed windows (H0, H0+1h) and the open one (H0+3h).
    await e.write(key, [H0 + 1000, H0 + 2000, H0 + H + 5000, H0 + 3 * H + 1000]);

    let [s] = (await e.health.shards()).filter((x) => x.shard === shard);
    const stats = await e.hot.shardStats({ ns: e.ns, shard });
    expect(s!.hot).toEqual({ bytes: stats.bytes, logs: 3, windows: [H0, H0 + H, H0 + 3 * H], oldestWindow: H0 });
    expect(stats.bytes).toBeGreaterThan(0);
    expect(s!.flush).toEqual({ closedWindows: 2, lagMs: e.clock.now() - (H0 + H), lastAt: null, lastWindow: null, lastLagMs: null });
    expect(s!.compaction).toEqual({ windows: 0, parts: 0, bytes: 0, maxPartsPerWindow: 0, windowsWithDebt: 0 });
    const idle = (await e.health.shards()).find((x) => x.shard === other)!;
    expect(idle.hot).toEqual({ bytes: 0, logs: 0, windows: [], oldestWindow: null });

    // Flush the closed windows: the hot tier keeps only the open one; two parts, no debt, rollups stale.
    e.advance(60_000);
    const flushedAt = e.clock.now();
    await e.flusher.flushAll(H0 + 3 * H);
    [s] = (await e.health.shards()).filter((x) => x.shard === shard);
    expect(s!.hot.windows).toEqual([H0 + 3 * H]);
    expect(s!.hot.bytes).toBeLessThan(stats.bytes);
    expect(s!.flush.closedWindows).toBe(0);
    expect(s!.flush.lagMs).toBe(0);
    expect(s!.flush.lastAt).toBe(flushedAt);
    expect(s!.flush.lastLagMs).toBe(flushedAt - (s!.flush.lastWindow! + H));
    expect(s!.compaction).toMatchObject({ windows: 2, parts: 2, maxPartsPerWindow: 1, windowsWithDebt: 0 });
    expect(s!.compaction.bytes).toBeGreaterThan(0);
    expect(s!.rollup).toEqual({ fresh: 0, stale: 2, oldestStale: H0, lastAt: null });

    // Rollups catch up.
    e.advance(60_000);
    await e.rollups.rollupAll(H0 - 86_400_000, H0 + 86_400_000);
    [s] = (await e.health.shards()).filter((x) => x.shard === shard);
    expect(s!.rollup).toEqual({ fresh: 2, stale: 0, oldestStale: null, lastAt: e.clock.now() });

    // Late data into H0+1h: a second part there (a fold owed), its rollup stale again.
    await e.write(key, [H0 + H + 9000]);
    e.advance(60_000);
    await e.flusher.flushAll(H0 + 3 * H);
    [s] = (await e.health.shards()).filter((x) => x.shard === shard);
    expect(s!.compaction).toMatchObject({ windows: 2, parts: 3, maxPartsPerWindow: 2, windowsWithDebt: 1 });
    expect(s!.rollup).toMatchObject({ fresh: 1, stale: 1, oldestStale: H0 + H });
    expect(s!.flush).toMatchObject({ lastAt: e.clock.now(), lastWindow: H0 + H, lastLagMs: e.clock.now() - (H0 + 2 * H) });

    // Once the day is closed the builder folds its hourly rollups into a day object and drops them: still fresh.
    const day = Math.floor(H0 / 86_400_000) * 86_400_000;
    e.advance(day + 86_400_000 + ROLLUP_DEFAULTS.dayAfterMs + 60_000 - e.clock.now());
    await e.rollups.rollupAll(H0 - 86_400_000, H0 + 86_400_000);
    [s] = (await e.health.shards()).filter((x) => x.shard === shard);
    expect(s!.rollup).toMatchObject({ fresh: 2, stale: 0, oldestStale: null });
    await e.hot.close();
    await e.objects.close();
  });
});
