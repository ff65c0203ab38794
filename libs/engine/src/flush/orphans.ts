import { DAY_MS, allShards, parseSegmentKey, segmentShardPrefix, type Clock, type ObjectStore, type ShardRef } from '@s4/core';
import type { CatalogStore } from '../catalog/catalog-store.js';

export interface OrphanSweepOptions {
  readonly ns: string;
  readonly shards: number;
  /**
   * How long a part must stay unregistered, across two sweeps, before it is deleted. A flusher
   * uploads first and registers right after; a part still unregistered this long after it was
   * first seen belongs to a flush that died between the two steps.
   */
  readonly graceMs: number;
  readonly clock: Clock;
}

export interface OrphanSweepStats {
  /** Segment objects listed. */
  parts: number;
  /** Unregistered parts seen, waiting out their grace period. */
  pending: number;
  deleted: number;
}

/**
 * Deletes segment parts that a crashed flush uploaded but never registered (the catalog is the
 * truth: no query can read them). Runs in the segment worker, rarely: it lists the object store,
 * which queries never do. Parts are remembered when first seen unregistered and deleted only on a
 * later sweep after the grace period, so a flush between its upload and its registration is
 * never robbed of its object.
 */
export class OrphanSweeper {
  /** Unregistered part key → when it was first seen so. */
  private readonly firstSeen = new Map<string, number>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly catalogs: CatalogStore,
    private readonly options: OrphanSweepOptions,
  ) {}

  async sweep(): Promise<OrphanSweepStats> {
    const stats: OrphanSweepStats = { parts: 0, pending: 0, deleted: 0 };
    for (const shard of allShards(this.options.shards)) {
      const s = await this.sweepShard({ ns: this.options.ns, shard });
      stats.parts += s.parts;
      stats.pending += s.pending;
      stats.deleted += s.deleted;
    }
    return stats;
  }

  private async sweepShard(ref: ShardRef): Promise<OrphanSweepStats> {
    const stats: OrphanSweepStats = { parts: 0, pending: 0, deleted: 0 };
    const now = this.options.clock.now();
    const registered = new Map<number, Set<string>>();
    const registeredIn = async (day: number) => {
      let keys = registered.get(day);
      if (!keys) {
        // Fresh from the store: a cached copy could miss a part registered a moment ago.
        const { catalog } = await this.catalogs.load(ref, day);
        registered.set(day, (keys = new Set(catalog.entries.map((e) => e.key))));
      }
      return keys;
    };
    const expired: string[] = [];
    const listed = new Set<string>();
    for await (const obj of this.objects.list(segmentShardPrefix(ref))) {
      const parsed = parseSegmentKey(obj.key);
      if (!parsed) continue;
      stats.parts++;
      listed.add(obj.key);
      if ((await registeredIn(Math.floor(parsed.window / DAY_MS) * DAY_MS)).has(obj.key)) {
        this.firstSeen.delete(obj.key);
        continue;
      }
      const first = this.firstSeen.get(obj.key);
      if (first === undefined) this.firstSeen.set(obj.key, now);
      if (first !== undefined && now - first >= this.options.graceMs) expired.push(obj.key);
      else stats.pending++;
    }
    if (expired.length > 0) {
      // Check once more right before deleting: the catalog is the only thing that may save a part.
      const still = [];
      registered.clear();
      for (const key of expired) if (!(await registeredIn(Math.floor(parseSegmentKey(key)!.window / DAY_MS) * DAY_MS)).has(key)) still.push(key);
      await this.objects.delete(still);
      for (const key of still) this.firstSeen.delete(key);
      stats.deleted += still.length;
    }
    const prefix = segmentShardPrefix(ref);
    for (const key of this.firstSeen.keys()) if (key.startsWith(prefix) && !listed.has(key)) this.firstSeen.delete(key);
    return stats;
  }
}
