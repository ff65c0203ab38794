import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { allShards, type Clock, type HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, Flusher, OrphanSweeper, PeriodicWorker, addCounts, rebuildCatalogs, type FlushStats } from '@s4/engine';
import { PerNamespace, threadPolicies } from '../../namespaces/per-namespace.js';
import type { Trigger } from '../threads/wire.js';
import { openObjectStore } from '../../stores.js';

/** The segment role: turns closed hot windows into segment objects (and rebuilds lost catalogs). */
export interface SegmentRoot {
  /**
   * Flush, in every namespace, the windows that closed its hot time ago ('periodic', but late data
   * into a window flushed less than S4_FLUSH_LATE_MS ago) or every closed window ('admin').
   */
  flush(trigger: Trigger): Promise<FlushStats>;
  /** Rebuild every shard's catalogs from the segment objects (LIST + footers). */
  rebuildCatalogs(): Promise<{ parts: number }>;
  /** Stops the background orphan sweep and the policy watch, then closes the object store. */
  close(): Promise<void>;
}

/** Pause before an admin flush asks a busy shard again. */
const ADMIN_RETRY_MS = 250;

/** Composition root of the segment role (runs in its worker thread): object store, catalogs, a Flusher per namespace. */
export async function createSegmentRoot(config: Config, hot: HotTier, clock: Clock): Promise<SegmentRoot> {
  const objects = await openObjectStore(config);
  const catalogs = new CatalogStore(objects);
  const policies = await threadPolicies(config);
  const owner = `${hostname()}-${process.pid}-t${threadId}-${randomUUID().slice(0, 8)}`;
  const flushers = new PerNamespace((p) => new Flusher(hot, objects, catalogs, { ns: p.name, shards: p.shards, owner, leaseTtlMs: config.flush.leaseTtlMs, lateMs: config.flush.lateMs, clock }));
  // Parts of flushes that died between upload and registration: rare, so swept rarely (it LISTs).
  const sweepers = new PerNamespace((p) => new OrphanSweeper(objects, catalogs, { ns: p.name, shards: p.shards, graceMs: config.flush.orphanGraceMs, clock }));
  const sweeping = new PeriodicWorker(
    config.flush.orphanSweepIntervalMs,
    async () => {
      for (const p of policies.current().all) await sweepers.for(p).sweep();
    },
    (e) => process.emitWarning(`segment thread: orphan sweep failed (retried next interval): ${(e as Error).message}`),
  );
  sweeping.start();
  return {
    async flush(trigger) {
      const total: FlushStats = { objects: 0, series: 0, samples: 0, bytes: 0, hotBytes: 0, busyShards: 0 };
      // An admin flush means "everything closed, now": shards another owner holds (a fold, a
      // rebuild, another process's flush) are asked again until they are free or the wait runs
      // out; busyShards then says how many were left.
      const attempts = trigger === 'admin' ? Math.ceil((2 * config.flush.leaseTtlMs) / ADMIN_RETRY_MS) : 1;
      for (let attempt = 1; ; attempt++) {
        const now = clock.now();
        const pass: FlushStats = { objects: 0, series: 0, samples: 0, bytes: 0, hotBytes: 0, busyShards: 0 };
        // Each namespace keeps closed windows hot for its own hot time (S4_FLUSH_GRACE_MS without a policy file).
        for (const p of policies.current().all) addCounts(pass, await flushers.for(p).flushAll(trigger === 'periodic' ? now - p.hotMs : now, trigger === 'periodic' ? 'periodic' : 'all'));
        addCounts(total, { ...pass, busyShards: 0 });
        total.busyShards = pass.busyShards;
        if (pass.busyShards === 0 || attempt >= attempts) return total;
        await new Promise((ok) => setTimeout(ok, ADMIN_RETRY_MS));
      }
    },
    async rebuildCatalogs() {
      let parts = 0;
      for (const p of policies.current().all)
        for (const shard of allShards(p.shards)) {
          const ref = { ns: p.name, shard };
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
      await policies.close();
      await objects.close();
    },
  };
}
