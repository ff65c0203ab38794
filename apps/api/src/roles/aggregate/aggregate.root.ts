import type { Clock, HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, RollupBuilder, addCounts, type RollupStats } from '@s4/engine';
import { PerNamespace, threadPolicies } from '../../namespaces/per-namespace.js';
import { openObjectStore } from '../../stores.js';

/** The aggregate role: computes rollups of the flushed segments. */
export interface AggregateRoot {
  /** Roll up every stale window in days overlapping [from, to). */
  rollup(from: number, to: number): Promise<RollupStats>;
  close(): Promise<void>;
}

/**
 * Composition root of the aggregate role (runs in its worker thread): object store, catalogs, a
 * RollupBuilder per namespace; a namespace whose policy lists no rollup resolution is skipped.
 */
export async function createAggregateRoot(config: Config, hot: HotTier, clock: Clock): Promise<AggregateRoot> {
  const objects = await openObjectStore(config);
  const catalogs = new CatalogStore(objects);
  const rollupCatalogs = new CatalogStore(objects, 'rollup');
  const policies = await threadPolicies(config);
  const builders = new PerNamespace((p) => new RollupBuilder(hot, objects, catalogs, rollupCatalogs, { ns: p.name, shards: p.shards, clock }));
  return {
    async rollup(from, to) {
      const total: RollupStats = { objects: 0, series: 0, windows: 0, deleted: 0 };
      for (const p of policies.current().all) if (p.rollups.length > 0) addCounts(total, await builders.for(p).rollupAll(from, to));
      return total;
    },
    async close() {
      await policies.close();
      await objects.close();
    },
  };
}
