import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { MANIFEST_KEY, PreconditionFailedError, systemClock, type Clock, type HotTier, type ObjectStore } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, Flusher, PeriodicWorker, QueryEngine, RollupBuilder, Writer } from '@s4/engine';
import { EmbeddedHotTier, FilesystemObjectStore, RedisHotTier, S3ObjectStore } from '@s4/storage';
import { Metrics } from './metrics.js';

/** Everything one S4 process runs, wired from the config. No framework in here. */
export interface Runtime {
  readonly config: Config;
  readonly clock: Clock;
  readonly hot: HotTier;
  readonly objects: ObjectStore;
  readonly catalogs: CatalogStore;
  readonly writer: Writer;
  readonly flusher: Flusher;
  readonly query: QueryEngine;
  readonly rollups: RollupBuilder;
  readonly metrics: Metrics;
  close(): Promise<void>;
}

export async function createRuntime(config: Config, clock: Clock = systemClock): Promise<Runtime> {
  const hot: HotTier =
    config.hot.kind === 'redis'
      ? new RedisHotTier(config.hot.url, { cluster: config.hot.cluster, timeoutMs: config.hot.timeoutMs, ...(config.hot.password ? { password: config.hot.password } : {}) })
      : await EmbeddedHotTier.open({ dir: config.hot.dir, fsync: config.hot.fsync, now: () => clock.now() });
  const objects: ObjectStore = config.objects.kind === 's3' ? new S3ObjectStore(config.objects) : new FilesystemObjectStore(config.objects.dir);
  if (objects instanceof S3ObjectStore && config.objects.kind === 's3' && config.objects.endpoint) await objects.ensureBucket();
  await checkManifest(objects, config);

  const ns = config.namespace;
  const metrics = new Metrics(hot, ns, config.shards, clock);
  const catalogs = new CatalogStore(objects);
  const writer = new Writer(hot, { ns, shards: config.shards, maxRecordBytes: config.limits.maxRecordBytes });
  const flusher = new Flusher(hot, objects, catalogs, {
    ns,
    shards: config.shards,
    owner: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    leaseTtlMs: config.flush.leaseTtlMs,
    clock,
  });
  const rollupCatalogs = new CatalogStore(objects, 'rollup');
  const query = new QueryEngine(hot, objects, catalogs, { ns, shards: config.shards, concurrency: config.query.concurrency, cacheBytes: config.query.cacheBytes }, rollupCatalogs, clock);
  metrics.watchQuery(query.counters);
  const rollups = new RollupBuilder(hot, objects, catalogs, rollupCatalogs, { ns, shards: config.shards, clock });

  const workers: PeriodicWorker[] = [];
  if (config.role === 'all' || config.role === 'segment')
    workers.push(
      new PeriodicWorker(
        config.flush.intervalMs,
        async () => {
          const started = clock.now();
          metrics.recordFlush(await flusher.flushAll(started - config.flush.graceMs), clock.now() - started);
        },
        (e) => metrics.recordFlushError(e),
      ),
    );
  if (config.role === 'all' || config.role === 'aggregate')
    workers.push(
      new PeriodicWorker(
        config.rollup.intervalMs,
        async () => {
          const now = clock.now();
          metrics.recordRollup(await rollups.rollupAll(now - config.rollup.lookbackMs, now + 86_400_000));
        },
        (e) => metrics.recordRollupError(e),
      ),
    );
  for (const w of workers) w.start();
  return {
    config,
    clock,
    hot,
    objects,
    catalogs,
    writer,
    flusher,
    query,
    rollups,
    metrics,
    async close() {
      for (const w of workers) await w.stop();
      await hot.close();
      await objects.close();
    },
  };
}

/**
 * The shard count decides where every series lives, so a store keeps the count it was created
 * with; starting with another count would hide data.
 */
async function checkManifest(objects: ObjectStore, config: Config): Promise<void> {
  const manifest = { format: 1, shards: config.shards };
  const got = await objects.get(MANIFEST_KEY);
  if (got && !got.notModified) {
    const stored = JSON.parse(Buffer.from(got.body).toString('utf8')) as { shards: number };
    if (stored.shards !== config.shards)
      throw new Error(`S4_SHARDS=${config.shards} but this store was created with ${stored.shards} shards; set S4_SHARDS=${stored.shards}`);
    return;
  }
  try {
    await objects.put(MANIFEST_KEY, Buffer.from(JSON.stringify({ ...manifest, createdAt: new Date().toISOString() })), { ifNoneMatch: '*' });
  } catch (e) {
    if (!(e instanceof PreconditionFailedError)) throw e;
    await checkManifest(objects, config);
  }
}
