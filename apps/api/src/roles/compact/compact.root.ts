import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import type { Clock, HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, Compactor, Retention, SeriesIndexBuilder, TombstoneStore, addCounts, type CompactStats, type RetentionStats, type SeriesIndexStats } from '@s4/engine';
import { PerNamespace, threadPolicies } from '../../namespaces/per-namespace.js';
import { openObjectStore } from '../../stores.js';

/** The compact role: deletes what retention expired, folds the parts of each shard-window into one, and deletes what folds replaced. */
export interface CompactRoot {
  /** Retention, then folds, then brings the series index of every changed shard-day up to its catalog. */
  compact(): Promise<CompactStats & { retention: RetentionStats; index?: SeriesIndexStats }>;
  close(): Promise<void>;
}

/** Composition root of the compact role (runs in its worker thread): object store, catalogs, a Compactor per namespace. */
export async function createCompactRoot(config: Config, hot: HotTier, clock: Clock): Promise<CompactRoot> {
  const objects = await openObjectStore(config);
  const catalogs = new CatalogStore(objects);
  const policies = await threadPolicies(config);
  const c = config.compact;
  const tombstones = new TombstoneStore(objects, 0); // a fold must see every stored deletion, whatever it costs
  // The compactor leases as `<owner>/compact`, so a flush and a fold of one shard exclude each other.
  const owner = `${hostname()}-${process.pid}-t${threadId}-${randomUUID().slice(0, 8)}`;
  const compactors = new PerNamespace(
    (p) =>
      new Compactor(hot, objects, catalogs, {
        ns: p.name,
        shards: p.shards,
        owner,
        leaseTtlMs: config.flush.leaseTtlMs,
        clock,
        minParts: c.minParts,
        settleMs: c.settleMs,
        deleteGraceMs: c.deleteGraceMs,
        lookbackMs: c.lookbackMs,
        concurrency: c.concurrency,
        tombstones,
        dayAfterMs: c.dayAfterMs,
      }),
  );
  const rollupCatalogs = new CatalogStore(objects, 'rollup');
  const retentions = new PerNamespace(() => new Retention(hot, objects, catalogs, rollupCatalogs, { owner, leaseTtlMs: config.flush.leaseTtlMs, clock, deleteGraceMs: c.deleteGraceMs, concurrency: c.concurrency }));
  const indexes = config.query.seriesIndex
    ? new PerNamespace((p) => new SeriesIndexBuilder(objects, catalogs, { ns: p.name, shards: p.shards, clock, lookbackMs: c.lookbackMs, concurrency: c.concurrency }))
    : null;
  return {
    async compact() {
      const total: CompactStats = { windows: 0, days: 0, partsIn: 0, bytesIn: 0, bytesOut: 0, samples: 0, deleted: 0, aborted: 0, busyShards: 0 };
      const retention: RetentionStats = { segments: 0, rollups: 0, catalogs: 0, bytes: 0, busyShards: 0 };
      const index: SeriesIndexStats = { indexes: 0, footers: 0, bytes: 0 };
      for (const p of policies.current().all) {
        // Retention first: what it takes out of the catalogs joins the pending deletes the compactor collects.
        addCounts(retention, await retentions.for(p).run(p));
        addCounts(total, await compactors.for(p).compactAll());
        // After the folds, so that a folded window is indexed as its one new part.
        if (indexes) addCounts(index, await indexes.for(p).buildAll());
      }
      return indexes ? { ...total, retention, index } : { ...total, retention };
    },
    async close() {
      await policies.close();
      await objects.close();
    },
  };
}
