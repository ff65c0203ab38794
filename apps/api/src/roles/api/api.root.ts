import type { CardinalityStore, Clock, HotTier, IngestLog, ObjectStore } from '@s4/core';
import type { Config } from '@s4/config';
import { Admission, CatalogStore, HealthReader, QueryEngine, TombstoneStore, Writer, sizeSeriesCaches } from '@s4/engine';
import type { Metrics } from '../../metrics.js';
import type { PolicyWatcher } from '../../namespaces/policy-watcher.js';

/** What the API role serves requests with (on the HTTP thread): writes into the hot tier, queries over both stores. */
export interface ApiRoot {
  readonly writer: Writer;
  readonly query: QueryEngine;
  readonly health: HealthReader;
  /** Namespace limits of a write, checked after validation (write.route.ts). */
  readonly admission: Admission;
  readonly policies: PolicyWatcher;
  readonly cardinality: CardinalityStore;
  readonly tombstones: TombstoneStore;
  /** The process's object store (the cost report LISTs a namespace's objects). */
  readonly objects: ObjectStore;
}

/**
 * Composition root of the API role. The hot tier and the object store are the process's (opened on
 * this thread, shared with /readyz and /metrics); flushing and rollups are not built here: they
 * run in the segment and aggregate worker threads. Every series is routed to its namespace by the
 * policies in force (one namespace, S4_NAMESPACE, without a policy file).
 */
export function createApiRoot(
  config: Config,
  hot: HotTier,
  objects: ObjectStore,
  metrics: Metrics,
  clock: Clock,
  policies: PolicyWatcher,
  cardinality: CardinalityStore,
  ingestLog: IngestLog | null = null,
): ApiRoot {
  const ns = config.namespace;
  const route = (metric: string) => {
    const p = policies.current().resolve(metric);
    return { ns: p.name, shards: p.shards, maxRecordBytes: p.limits.maxRecordBytes };
  };
  const namespaces = () => policies.current().all.map((p) => ({ ns: p.name, shards: p.shards }));
  const tombstones = new TombstoneStore(objects);
  // The write path's series caches are the process's (module state of the write parsers): sized here, before the first write.
  sizeSeriesCaches(config.seriesCacheEntries);
  // With an ingest log (S4_INGEST=kafka) every write endpoint's Writer produces to it instead of the hot tier.
  const writer = new Writer(hot, { ns, shards: config.shards, maxRecordBytes: config.limits.maxRecordBytes, route }, ingestLog);
  const query = new QueryEngine(
    hot,
    objects,
    new CatalogStore(objects),
    { ns, shards: config.shards, concurrency: config.query.concurrency, cacheBytes: config.query.cacheBytes, seriesIndex: config.query.seriesIndex, route, namespaces, tombstones },
    new CatalogStore(objects, 'rollup'),
    clock,
  );
  metrics.watchQuery(query.counters);
  // Its own catalog caches: the health page must not evict what queries keep warm.
  const health = new HealthReader(hot, new CatalogStore(objects), new CatalogStore(objects, 'rollup'), { ns, shards: config.shards, clock, lookbackMs: config.rollup.lookbackMs });
  // Admitted series are remembered as long as the series caches keep them (two generations): past
  // its bound the memo starts over and every series is checked with the store again, each round.
  const admission = new Admission(cardinality, () => policies.current(), {
    maxKnown: Math.max(1_000_000, 2 * config.seriesCacheEntries),
    onRefused: (n, limit) => metrics.seriesRefused.inc({ namespace: n, limit }),
  });
  return { writer, query, health, admission, policies, cardinality, tombstones, objects };
}
