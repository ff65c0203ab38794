import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { allShards, type Clock, type HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, Flusher, OrphanSweeper, PeriodicWorker, rebuildCatalogs, type FlushStats } from '@s4/engine';
import { openObjectStore } from '../../stores.js';

/** The segment role: turns closed hot windows into segment objects (and rebuilds lost catalogs). */
export interface SegmentRoot {
  /** Flush every window that ends at or before `cutoff`. */
  flush(cutoff: number): Promise<FlushStats>;
  /** Rebuild every shard's catalogs from the segment objects (LIST + footers). */
  rebuildCatalogs(): Promise<{ parts: number }>;
  /** Stops the background orphan sweep, then closes the object store. */
  close(): Promise<void>;
}

/** Composition root of the segment role (runs in its worker thread): object store, catalogs, Flusher. */
export function createSegmentRoot(config: Config, hot: HotTier, clock: Clock): SegmentRoot {
  const objects = openObjectStore(config);
  const catalogs = new CatalogStore(objects);
  const ns = config.namespace;
  const owner = `${hostname()}-${process.pid}-t${threadId}-${randomUUID().slice(0, 8)}`;
  const flusher = new Flusher(hot, objects, catalogs, { ns, shards: config.shards, owner, leaseTtlMs: config.flush.leaseTtlMs, clock });
  // Parts of flushes that died between upload and registration: rare, so swept rarely (it LISTs).
  const sweeper = new OrphanSweeper(objects, catalogs, { ns, shards: config.shards, graceMs: config.flush.orphanGraceMs, clock });
  const sweeping = new PeriodicWorker(
    config.flush.orphanSweepIntervalMs,
    async () => {
      await sweeper.sweep();
    },
    (e) => process.emitWarning(`segment thread: orphan sweep failed (retried next interval): ${(e as Error).message}`),
  );
  sweeping.start();
  return {
    flush: (cutoff) => flusher.flushAll(cutoff),
    async rebuildCatalogs() {
      let parts = 0;
      for (const shard of allShards(config.shards)) {
        const ref = { ns, shard };
        parts += await rebuildCatalogs(objects, catalogs, ref, clock.now());
        // Readers in other threads and processes revalidate cached catalogs when the shard's
        // generation moves. Another owner than the flusher's, so a flush running on this shard
        // keeps its lease (it bumps the generation itself when it registers its part).
        const lease = await hot.acquireLease(ref, `${owner}-rebuild`, config.flush.leaseTtlMs);
        if (lease)
          try {
            await hot.bumpGeneration(lease);
          } finally {
            await hot.releaseLease(lease);
          }
      }
      return { parts };
    },
    async close() {
      await sweeping.stop();
      await objects.close();
    },
  };
}
