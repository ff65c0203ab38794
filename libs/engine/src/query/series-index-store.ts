import { CorruptDataError, DAY_MS, parseSegmentKey, seriesIndexKey, type Clock, type ObjectStore, type ShardRef } from '@s4/core';
import { decodeSeriesIndex, indexedEntry, type CatalogEntry, type FooterEntry, type IndexedPart, type SeriesIndex } from '@s4/format';
import { selectOrdinals, slotsOf } from '../series-index/postings.js';
import { ByteBudgetCache } from './cache.js';
import { matchersOf, type TagSelector } from './selector.js';

interface Loaded {
  readonly index: SeriesIndex | null;
  readonly parts: ReadonlyMap<string, IndexedPart>;
  readonly etag: string | undefined;
  checkedAt: number;
}

/** A selector as queries pass it: a metric (any when undefined) and tag conditions. */
export interface IndexQuery extends TagSelector {
  readonly metric: string | undefined;
}

/**
 * The series indexes of every shard-day, decoded and cached under a byte budget. An index
 * changes only when the builder rewrites it, which moves no generation, so a copy is revalidated
 * (a conditional GET, usually 304) once it is `revalidateMs` old. A missing index answers
 * nothing, and the query reads footers instead; so does a part the index does not cover yet.
 */
export class SeriesIndexStore {
  private readonly cache: ByteBudgetCache<Loaded>;
  private readonly loading = new Map<string, Promise<Loaded>>();
  /** Per query selector and index: the matching ordinals, computed once. */
  private readonly selections = new WeakMap<object, WeakMap<SeriesIndex, Uint32Array>>();

  constructor(
    private readonly objects: ObjectStore,
    cacheBytes: number,
    private readonly clock: Clock = { now: () => Date.now() },
    private readonly revalidateMs = 5_000,
  ) {
    this.cache = new ByteBudgetCache(cacheBytes);
  }

  /** The index of a shard-day, or null when there is none. */
  async get(ref: ShardRef, day: number): Promise<SeriesIndex | null> {
    return (await this.load(ref, day)).index;
  }

  /**
   * The footer entries of the part's series the selector matches (time range not applied), or
   * undefined when no index covers the part.
   */
  async blocks(entry: CatalogEntry, selector: IndexQuery): Promise<FooterEntry[] | undefined> {
    const parsed = parseSegmentKey(entry.key);
    if (!parsed) return undefined;
    const loaded = await this.load(parsed, Math.floor(parsed.window / DAY_MS) * DAY_MS);
    const part = loaded.parts.get(entry.key);
    if (!loaded.index || !part) return undefined;
    const index = loaded.index;
    let perIndex = this.selections.get(selector);
    if (!perIndex) this.selections.set(selector, (perIndex = new WeakMap()));
    let ordinals = perIndex.get(index);
    if (!ordinals) perIndex.set(index, (ordinals = selectOrdinals(index, { metric: selector.metric, tags: selector.tags, matchers: matchersOf(selector) })));
    return slotsOf(part, ordinals).map((i) => indexedEntry(index, part, i));
  }

  private async load(ref: ShardRef, day: number): Promise<Loaded> {
    const key = seriesIndexKey(ref, day);
    const now = this.clock.now();
    const cached = this.cache.get(key);
    if (cached && now - cached.checkedAt < this.revalidateMs) return cached;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.fetch(key, cached, now).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async fetch(key: string, cached: Loaded | undefined, now: number): Promise<Loaded> {
    const got = await this.objects.get(key, cached?.etag ? { ifNoneMatch: cached.etag } : undefined);
    let next: Loaded;
    let bytes = 64;
    if (got === null) next = { index: null, parts: new Map(), etag: undefined, checkedAt: now };
    else if (got.notModified) {
      cached!.checkedAt = now;
      return cached!;
    } else {
      let index: SeriesIndex | null = null;
      try {
        index = decodeSeriesIndex(got.body);
      } catch (e) {
        // Derived data: a damaged index is one the builder will rewrite; until then, footers answer.
        if (!(e instanceof CorruptDataError)) throw e;
      }
      next = { index, parts: new Map(index?.parts.map((p) => [p.key, p])), etag: got.etag, checkedAt: now };
      if (index) bytes = estimateBytes(index);
    }
    this.cache.set(key, next, bytes);
    return next;
  }
}

/** Roughly what a decoded index occupies: its typed arrays and an object per series. */
function estimateBytes(index: SeriesIndex): number {
  let n = index.series.length * 160;
  for (const p of index.parts) n += p.ordinals.length * 60 + p.extras.length * 8;
  return n;
}
