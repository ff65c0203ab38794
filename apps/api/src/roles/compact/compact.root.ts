import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import type { Clock, HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { CatalogStore, Compactor, type CompactStats } from '@s4/engine';
import { openObjectStore } from '../../stores.js';

/** The compact role: folds the parts of each shard-window into one, and deletes what folds replaced. */
export interface CompactRoot {
  compact(): Promise<CompactStats>;
  close(): Promise<void>;
}

/** Composition root of the compact role (runs in its worker thread): object store, catalogs, Compactor. */
export function createCompactRoot(config: Config, hot: HotTier, clock: Clock): CompactRoot {
  const objects = openObjectStore(config);
  const c = config.compact;
  const compactor = new Compactor(hot, objects, new CatalogStore(objects), {
    ns: config.namespace,
    shards: config.shards,
    // The compactor leases as `<owner>/compact`, so a flush and a fold of one shard exclude each other.
    owner: `${hostname()}-${process.pid}-t${threadId}-${randomUUID().slice(0, 8)}`,
    leaseTtlMs: config.flush.leaseTtlMs,
    clock,
    minParts: c.minParts,
    settleMs: c.settleMs,
    deleteGraceMs: c.deleteGraceMs,
    lookbackMs: c.lookbackMs,
    concurrency: c.concurrency,
    dayAfterMs: c.dayAfterMs,
  });
  return {
    compact: () => compactor.compactAll(),
    close: () => objects.close(),
  };
}
