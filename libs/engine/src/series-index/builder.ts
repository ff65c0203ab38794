import { DAY_MS, allShards, seriesIndexKey, type Clock, type ObjectStore, type ShardRef } from '@s4/core';
import { decodeFooter, decodeSeriesIndex, encodeSeriesIndex, indexedEntry, SERIES_INDEX_VERSION, type FooterEntry, type SeriesIndex } from '@s4/format';
import type { CatalogStore } from '../catalog/catalog-store.js';
import { mapLimit } from '../concurrency.js';

export interface SeriesIndexBuilderOptions {
  readonly ns: string;
  readonly shards: number;
  readonly clock: Clock;
  /** Index days that end within this long before now. */
  readonly lookbackMs: number;
  /** Shards indexed at once. */
  readonly concurrency?: number;
}

export interface SeriesIndexStats {
  /** Shard-days whose index was written (new parts, folded parts, or a lost index). */
  indexes: number;
  /** Footers read for parts the previous index did not cover. */
  footers: number;
  /** Bytes of the indexes written. */
  bytes: number;
}

/**
 * Keeps each shard-day's series index (series-index.md) covering exactly the parts its catalog
 * lists: when they differ, the index is written again from the previous index (parts it already
 * covers) and the footers of the others. A lost or unreadable index is rebuilt from footers
 * alone. The index is derived data: queries use it for the parts it covers and read footers for
 * the rest, so an index that lags the catalog, or none at all, changes no answer.
 */
export class SeriesIndexBuilder {
  /**
   * Per index key, the catalog ETag it was last built from here and the index's own ETag, so an
   * unchanged day costs a HEAD, not a GET of its index; a lost or replaced index is rebuilt.
   */
  private readonly built = new Map<string, { catalog: string; index: string }>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly catalogs: CatalogStore,
    private readonly options: SeriesIndexBuilderOptions,
  ) {}

  async buildAll(): Promise<SeriesIndexStats> {
    const total: SeriesIndexStats = { indexes: 0, footers: 0, bytes: 0 };
    const refs = allShards(this.options.shards).map((shard) => ({ ns: this.options.ns, shard }));
    await mapLimit(refs, this.options.concurrency ?? 2, async (ref) => {
      const now = this.options.clock.now();
      // The clock as the generation: every pass revalidates the day list (a conditional GET).
      for (const day of await this.catalogs.days(ref, now)) {
        if (day + DAY_MS <= now - this.options.lookbackMs) continue;
        const s = await this.build(ref, day);
        total.indexes += s.indexes;
        total.footers += s.footers;
        total.bytes += s.bytes;
      }
    });
    return total;
  }

  /** Bring one shard-day's index up to its catalog. */
  async build(ref: ShardRef, day: number): Promise<SeriesIndexStats> {
    const { catalog, etag } = await this.catalogs.load(ref, day);
    const key = seriesIndexKey(ref, day);
    // Same catalog as when this builder last wrote the index, and the index still there (a lost one is rebuilt).
    const memo = this.built.get(key);
    if (memo && memo.catalog === etag && (await this.objects.head(key))?.etag === memo.index) return { indexes: 0, footers: 0, bytes: 0 };
    let previous: SeriesIndex | null = null;
    let current = false;
    const wanted = new Set(catalog.entries.map((e) => e.key));
    // Every entry of the previous index that the catalog still lists, read now: version 2 decodes a
    // block when it is read, so a damaged one shows here (and the index is rebuilt) rather than
    // halfway through a rewrite. Those of parts a fold replaced are left undecoded: after a fold of
    // 28,000 series' two parts they were two thirds of the entries built (and held) for nothing.
    let entries = new Map<string, FooterEntry[]>();
    const got = await this.objects.get(key);
    if (got && !got.notModified) {
      try {
        const ix = decodeSeriesIndex(got.body);
        entries = new Map(ix.parts.filter((p) => wanted.has(p.key)).map((p) => [p.key, Array.from(p.ordinals, (_, i) => indexedEntry(ix, p, i))]));
        // Postings lists decode when iterated: a damaged one must show here too.
        for (const m of [ix.metrics, ...ix.tags.values()]) for (const list of m.values()) void list;
        previous = ix;
        current = got.body[4] === SERIES_INDEX_VERSION;
      } catch {
        previous = null; // unreadable: rebuilt from footers like a lost one
        entries = new Map();
      }
    }
    const covered = new Map((previous?.parts ?? []).map((p) => [p.key, p]));
    // An index of an older version is written again in the current one (from its own entries).
    if (previous && current && wanted.size === covered.size && [...wanted].every((k) => covered.has(k))) {
      if (etag !== undefined && got && !got.notModified) this.built.set(key, { catalog: etag, index: got.etag });
      return { indexes: 0, footers: 0, bytes: 0 };
    }
    let footers = 0;
    const parts = await mapLimit(catalog.entries, 4, async (e) => {
      let series = entries.get(e.key);
      if (!series) {
        const f = await this.objects.get(e.key, { range: { offset: e.footerOffset, length: e.footerLength } });
        // A part registered but gone (deleted after a fold while we read the catalog): the next pass sees the new catalog.
        if (!f || f.notModified) return null;
        footers++;
        series = decodeFooter(f.body).series;
      }
      return { key: e.key, window: e.window, series };
    });
    const bytes = encodeSeriesIndex({ ns: ref.ns, shard: ref.shard, day, parts: parts.filter((p) => p !== null) });
    const put = await this.objects.put(key, bytes);
    // Only a complete index is remembered: one that skipped a vanished part is looked at again.
    if (etag !== undefined && parts.every((p) => p !== null)) this.built.set(key, { catalog: etag, index: put.etag });
    return { indexes: 1, footers, bytes: bytes.length };
  }
}
