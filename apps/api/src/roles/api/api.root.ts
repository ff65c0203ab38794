import type { Clock, HotTier, IngestLog, ObjectStore } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, HealthReader, QueryEngine, Writer } from '@s4/engine';
import type { Metrics } from '../../metrics.js';

/** What the API role serves requests with (on the HTTP thread): writes into the hot tier, queries over both stores. */
export interface ApiRoot {
  readonly writer: Writer;
  readonly query: QueryEngine;
  readonly health: HealthReader;
}

/**
 * Composition root of the API role. The hot tier and the object store are the process's (opened on
 * this thread, shared with /readyz and /metrics); flushing and rollups are not built here: they
 * run in the segment and aggregate worker threads.
 */
export function createApiRoot(config: Config, hot: HotTier, objects: ObjectStore, metrics: Metrics, clock: Clock, ingestLog: IngestLog | null = null): ApiRoot {
  const ns = config.namespace;
  // With an ingest log (S4_INGEST=kafka) every write endpoint's Writer produces to it instead of the hot tier.
  const writer = new Writer(hot, { ns, shards: config.shards, maxRecordBytes: config.limits.maxRecordBytes }, ingestLog);
  const query = new QueryEngine(
    hot,
    objects,
    new CatalogStore(objects),
    { ns, shards: config.shards, concurrency: config.query.concurrency, cacheBytes: config.query.cacheBytes, seriesIndex: config.query.seriesIndex },
    new CatalogStore(objects, 'rollup'),
    clock,
  );
  metrics.watchQuery(query.counters);
  // Its own catalog caches: the health page must not evict what queries keep warm.
  const health = new HealthReader(hot, new CatalogStore(objects), new CatalogStore(objects, 'rollup'), { ns, shards: config.shards, clock, lookbackMs: config.rollup.lookbackMs });
  return { writer, query, health };
}
