import { PreconditionFailedError, allShards, catalogDaysKey, catalogKey, type Clock, type HotTier, type Lease, type NamespacePolicy, type ObjectStore, type ShardRef } from '@s4/core';
import { decodeDayList, encodeDayList, type CatalogEntry } from '@s4/format';
import type { CatalogStore } from '../catalog/catalog-store.js';
import { PendingDeletesStore, upsert } from '../compact/pending-deletes.js';
import { mapLimit } from '../concurrency.js';
import { addCounts } from '../counts.js';
import { planDay } from './plan.js';

export interface RetentionOptions {
  /** This process, as the compactor names it: retention leases the shard as the compactor does (`<owner>/compact`). */
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  /**
   * Objects leave their catalog first and are deleted only this long after readers were told
   * (the generation bump), so queries already reading them finish; the compactor's pending-delete
   * collection deletes them (S4_COMPACT_DELETE_GRACE_MS).
   */
  readonly deleteGraceMs: number;
  /** Shards handled at once (default 2). */
  readonly concurrency?: number;
}

export interface RetentionStats {
  /** Raw segment parts taken out of their catalogs (deleted after the grace). */
  segments: number;
  /** Rollup objects (hourly and day) taken out of their catalogs. */
  rollups: number;
  /** Catalogs of whole expired days unlisted (deleted after the grace). */
  catalogs: number;
  /** Bytes of the objects taken out. */
  bytes: number;
  /** Shards another owner's lease kept this pass from. */
  busyShards: number;
}

const empty = (): RetentionStats => ({ segments: 0, rollups: 0, catalogs: 0, bytes: 0, busyShards: 0 });

/**
 * Deletes what a namespace's retention has expired (docs/namespaces.md, "Retention"): per shard,
 * under the shard's lease, each expired raw part and rollup object leaves its day's catalog
 * (compare-and-swap), a day's catalog whose every entry expired leaves the day list, the shard's
 * generation moves so readers re-read their catalogs, and only then are the objects queued in
 * the shard's pending deletes with a time a grace period away. The compactor's collection deletes
 * them when that time comes, if no catalog names them again; so a reader that planned a query
 * before the catalog changed can still read every object it found.
 */
export class Retention {
  private readonly pending: PendingDeletesStore;

  constructor(
    private readonly hot: HotTier,
    private readonly objects: ObjectStore,
    private readonly catalogs: CatalogStore,
    private readonly rollupCatalogs: CatalogStore,
    private readonly options: RetentionOptions,
  ) {
    this.pending = new PendingDeletesStore(objects);
  }

  /** One pass over every shard of the namespace. */
  async run(policy: NamespacePolicy): Promise<RetentionStats> {
    const total = empty();
    const keepsAll = policy.rawRetentionMs === null && policy.rollups.every((r) => r.retentionMs === null);
    if (keepsAll) return total;
    const per = await mapLimit(allShards(policy.shards), this.options.concurrency ?? 2, (shard) => this.runShard({ ns: policy.name, shard }, policy));
    for (const s of per) addCounts(total, s);
    return total;
  }

  async runShard(ref: ShardRef, policy: NamespacePolicy): Promise<RetentionStats> {
    const stats = empty();
    const lease = await this.hot.acquireLease(ref, `${this.options.owner}/compact`, this.options.leaseTtlMs);
    if (!lease) return { ...stats, busyShards: 1 };
    try {
      const now = this.options.clock.now();
      const gone: string[] = [];
      for (const [kind, store] of [['segment', this.catalogs], ['rollup', this.rollupCatalogs]] as const) {
        for (const day of await this.days(ref, kind)) {
          const { catalog } = await store.load(ref, day);
          const { expired, dropCatalog } = planDay(catalog.entries, kind, day, policy, now);
          if (expired.length === 0 && !dropCatalog) continue;
          const taken: CatalogEntry[] = [];
          await store.update(ref, day, (current) => {
            // Judged again on the copy being changed: an entry registered meanwhile is judged next pass.
            const out = planDay(current.entries, kind, day, policy, now).expired;
            taken.splice(0, taken.length, ...out);
            if (out.length === 0) return null;
            const keys = new Set(out.map((e) => e.key));
            return { ...current, entries: current.entries.filter((e) => !keys.has(e.key)) };
          });
          for (const e of taken) {
            gone.push(e.key);
            stats.bytes += e.size;
            if (kind === 'segment') stats.segments++;
            else stats.rollups++;
          }
          if (dropCatalog && (await this.unlistDay(ref, kind, day))) {
            gone.push(catalogKey(ref, day, kind));
            stats.catalogs++;
          }
        }
      }
      if (gone.length > 0) await this.announce(lease, gone);
    } finally {
      await this.hot.releaseLease(lease);
    }
    return stats;
  }

  /** Tell readers (generation bump), then time the deletes a grace period away. */
  private async announce(lease: Lease, keys: readonly string[]): Promise<void> {
    await this.hot.bumpGeneration(lease);
    const deleteAfter = this.options.clock.now() + this.options.deleteGraceMs;
    await this.pending.update(lease.ref, (current) => upsert(current, keys, deleteAfter));
  }

  private async days(ref: ShardRef, kind: 'segment' | 'rollup'): Promise<number[]> {
    const got = await this.objects.get(catalogDaysKey(ref, kind));
    return got && !got.notModified ? decodeDayList(got.body) : [];
  }

  /** Take a day out of the shard's day list if its catalog is still empty; true when it left. */
  private async unlistDay(ref: ShardRef, kind: 'segment' | 'rollup', day: number): Promise<boolean> {
    const store = kind === 'segment' ? this.catalogs : this.rollupCatalogs;
    const key = catalogDaysKey(ref, kind);
    for (let attempt = 0; ; attempt++) {
      if ((await store.load(ref, day)).catalog.entries.length > 0) return false;
      const got = await this.objects.get(key);
      if (!got || got.notModified) return false;
      const days = decodeDayList(got.body);
      if (!days.includes(day)) return false;
      try {
        await this.objects.put(key, encodeDayList(days.filter((d) => d !== day)), { ifMatch: got.etag });
        return true;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 10) throw e;
      }
    }
  }
}
