import type { Clock, HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, RollupBuilder, type RollupStats } from '@s4/engine';
import { openObjectStore } from '../../stores.js';

/** The aggregate role: computes rollups of the flushed segments. */
export interface AggregateRoot {
  /** Roll up every stale window in days overlapping [from, to). */
  rollup(from: number, to: number): Promise<RollupStats>;
  close(): Promise<void>;
}

/** Composition root of the aggregate role (runs in its worker thread): object store, catalogs, RollupBuilder. */
export function createAggregateRoot(config: Config, hot: HotTier, clock: Clock): AggregateRoot {
  const objects = openObjectStore(config);
  const builder = new RollupBuilder(hot, objects, new CatalogStore(objects), new CatalogStore(objects, 'rollup'), { ns: config.namespace, shards: config.shards, clock });
  return {
    rollup: (from, to) => builder.rollupAll(from, to),
    close: () => objects.close(),
  };
}
