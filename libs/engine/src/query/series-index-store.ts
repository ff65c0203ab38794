import { CorruptDataError, DAY_MS, parseSegmentKey, seriesIndexKey, type Clock, type GetResult, type ObjectStore, type ShardRef } from '@s4/core';
import { decodeSeriesIndex, decodedIndexBytes, indexedEntry, type CatalogEntry, type FooterEntry, type IndexedPart, type SeriesIndex } from '@s4/format';
import { selectOrdinals, slotsOf } from '../series-index/postings.js';
import { FrequencyAdmissionCache } from './cache.js';
import { matchersOf, selectorKey, type TagSelector } from './selector.js';

interface Loaded {
  readonly index: SeriesIndex | null;
  readonly parts: ReadonlyMap<string, IndexedPart>;
  readonly etag: string | undefined;
  checkedAt: number;
}

/**
 * What is known of an index without its decoded copy: its etag, when that was last confirmed, and
 * the footer entries of its last small selections per part. A shard-day index of many series (at
 * 1 M series, 16 indexes of ~94,000 series, ~14 MB decoded each) may not fit the indexes' cache
 * share; a query that repeats (a dashboard, an alert, a probe) is then answered from these entries
 * after a conditional GET, instead of fetching and decoding the index again.
 */
interface Known {
  readonly etag: string;
  checkedAt: number;
  /** Selector key → part key → the part's matching entries (time range not applied). */
  readonly picks: Map<string, Map<string, FooterEntry[]>>;
  /** Entries held in `picks`. */
  entries: number;
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
  private readonly cache: FrequencyAdmissionCache<Loaded>;
  private readonly loading = new Map<string, Promise<Loaded>>();
  /** Per index: the ordinals of its last selectors, by selector key, least recently used first. */
  private readonly selections = new WeakMap<SeriesIndex, Map<string, Uint32Array>>();
  /** Per query selector and index: selections too large for `selections`, computed once per query. */
  private readonly large = new WeakMap<object, WeakMap<SeriesIndex, Uint32Array>>();
  /** Per index key (least recently used first): see Known. At most KNOWN_ENTRIES footer entries in all. */
  private readonly known = new Map<string, Known>();
  private knownEntries = 0;
  /** Conditional GETs of an index whose decoded copy is not cached, by index key (one at a time). */
  private readonly confirming = new Map<string, Promise<true | Loaded>>();

  constructor(
    private readonly objects: ObjectStore,
    cacheBytes: number,
    private readonly clock: Clock = { now: () => Date.now() },
    private readonly revalidateMs = 5_000,
  ) {
    this.cache = new FrequencyAdmissionCache(cacheBytes);
  }

  /** The index of a shard-day, or null when there is none. */
  async get(ref: ShardRef, day: number): Promise<SeriesIndex | null> {
    return (await this.load(ref, day)).index;
  }

  /**
   * Starts reading the indexes of these shards' days overlapping [from, to), without waiting: a
   * query visits its shards a few at a time, and each waited for its hot scan, then its index,
   * then its blocks (Redis + S3, 16 shards: two waves of three to four round trips). The reads are
   * the ones `blocks` would make (shared through `loading`); their errors are left to it. An index
   * known only by its picks is left to `blocks`, which may need just a conditional GET.
   */
  prefetch(refs: readonly ShardRef[], from: number, to: number): void {
    const first = Math.floor(from / DAY_MS) * DAY_MS;
    if (to <= from || (to - first) / DAY_MS > PREFETCH_DAYS) return;
    for (const ref of refs)
      for (let day = first; day < to; day += DAY_MS) {
        const key = seriesIndexKey(ref, day);
        const cached = this.cache.get(key);
        if (cached || !this.known.has(key)) this.loadKey(key, cached).catch(() => undefined);
      }
  }

  /** The index covering a part and the part's columns in it, or undefined when none covers it. */
  async covering(entry: CatalogEntry): Promise<{ index: SeriesIndex; part: IndexedPart } | undefined> {
    const parsed = parseSegmentKey(entry.key);
    if (!parsed) return undefined;
    const key = seriesIndexKey(parsed, Math.floor(parsed.window / DAY_MS) * DAY_MS);
    const { loaded, part } = await this.partOf(key, entry.key, this.cache.get(key));
    return loaded.index && part ? { index: loaded.index, part } : undefined;
  }

  /**
   * The ordinals (ascending) of the index's series the selector matches. Kept per index for the
   * last few selectors: a dashboard asks the same ones again, and the index never changes (a new
   * one is a new object).
   */
  select(index: SeriesIndex, selector: IndexQuery): Uint32Array {
    const key = selectorKey(selector);
    let memo = this.selections.get(index);
    if (!memo) this.selections.set(index, (memo = new Map<string, Uint32Array>()));
    let ordinals = memo.get(key);
    if (ordinals) {
      memo.delete(key); // most recently used last
      memo.set(key, ordinals);
      return ordinals;
    }
    let perIndex = this.large.get(selector);
    ordinals = perIndex?.get(index);
    if (ordinals) return ordinals;
    ordinals = selectOrdinals(index, { metric: selector.metric, tags: selector.tags, matchers: matchersOf(selector) });
    if (ordinals.length > SELECTION_MAX_ORDINALS) {
      // As costly to read as to compute: kept for this query's other parts only.
      if (!perIndex) this.large.set(selector, (perIndex = new WeakMap()));
      perIndex.set(index, ordinals);
      return ordinals;
    }
    memo.set(key, ordinals);
    if (memo.size > SELECTIONS_PER_INDEX) memo.delete(memo.keys().next().value!);
    return ordinals;
  }

  /**
   * The footer entries of the part's series the selector matches (time range not applied), or
   * undefined when no index covers the part.
   */
  async blocks(entry: CatalogEntry, selector: IndexQuery): Promise<FooterEntry[] | undefined> {
    const parsed = parseSegmentKey(entry.key);
    if (!parsed) return undefined;
    const key = seriesIndexKey(parsed, Math.floor(parsed.window / DAY_MS) * DAY_MS);
    const skey = selectorKey(selector);
    const cached = this.cache.get(key);
    const known = cached ? undefined : this.known.get(key);
    const picked = known?.picks.get(skey)?.get(entry.key);
    let loaded: Loaded | undefined;
    if (known && picked) {
      const confirmed = await this.confirm(key, known);
      if (confirmed === true) {
        this.known.delete(key); // most recently used last
        this.known.set(key, known);
        return picked.slice();
      }
      loaded = confirmed;
    }
    let part: IndexedPart | undefined;
    if (loaded) part = loaded.parts.get(entry.key);
    else ({ loaded, part } = await this.partOf(key, entry.key, cached));
    if (!loaded.index || !part) return undefined;
    const index = loaded.index;
    let found: FooterEntry[];
    try {
      found = slotsOf(part, this.select(index, selector)).map((i) => indexedEntry(index, part, i));
    } catch (e) {
      if (!(e instanceof CorruptDataError)) throw e;
      this.damaged(entry);
      return undefined;
    }
    if (loaded.etag !== undefined) this.remember(key, loaded, skey, entry.key, found);
    return found.slice();
  }

  /**
   * Forgets the decoded index covering a part after a block of it (version 2 decodes blocks when
   * a query reads them) turned out damaged: until the index changes, queries read footers.
   */
  damaged(entry: CatalogEntry): void {
    const parsed = parseSegmentKey(entry.key);
    if (!parsed) return;
    const key = seriesIndexKey(parsed, Math.floor(parsed.window / DAY_MS) * DAY_MS);
    const loaded = this.cache.get(key);
    if (loaded?.index) this.cache.set(key, { index: null, parts: new Map(), etag: loaded.etag, checkedAt: loaded.checkedAt }, 64);
    const known = this.known.get(key);
    if (known) this.forget(key, known);
  }

  /** Keeps a part's entries for a selector while the index's etag stays (see Known), within KNOWN_ENTRIES. */
  private remember(key: string, loaded: Loaded, skey: string, partKey: string, found: FooterEntry[]): void {
    if (found.length > KNOWN_PICK_ENTRIES) return;
    let known = this.known.get(key);
    if (known && known.etag !== loaded.etag) {
      this.forget(key, known);
      known = undefined;
    }
    if (!known) this.known.set(key, (known = { etag: loaded.etag!, checkedAt: loaded.checkedAt, picks: new Map(), entries: 0 }));
    known.checkedAt = Math.max(known.checkedAt, loaded.checkedAt);
    let parts = known.picks.get(skey);
    if (parts) known.picks.delete(skey); // most recently used last
    else parts = new Map();
    known.picks.set(skey, parts);
    const before = parts.get(partKey)?.length ?? 0;
    parts.set(partKey, found);
    known.entries += found.length - before;
    this.knownEntries += found.length - before;
    // Over the bound: the least recently used selections of this index, then the least recently used indexes.
    while (known.picks.size > SELECTIONS_PER_INDEX) this.drop(known, known.picks.keys().next().value!);
    for (const [k, other] of this.known) {
      if (this.knownEntries <= KNOWN_ENTRIES) break;
      if (other !== known) this.forget(k, other);
    }
  }

  private drop(known: Known, skey: string): void {
    let n = 0;
    for (const list of known.picks.get(skey)!.values()) n += list.length;
    known.picks.delete(skey);
    known.entries -= n;
    this.knownEntries -= n;
  }

  private forget(key: string, known: Known): void {
    this.known.delete(key);
    this.knownEntries -= known.entries;
  }

  /**
   * True when the index at `key` still has the known etag: without asking when it was confirmed
   * within `revalidateMs`, else after a conditional GET. A changed or missing index forgets what was
   * known, and what the GET brought is the index now (decoded and cached once, not fetched again).
   */
  private async confirm(key: string, known: Known): Promise<true | Loaded> {
    if (this.clock.now() - known.checkedAt < this.revalidateMs) return true;
    let pending = this.confirming.get(key);
    if (!pending) {
      const now = this.clock.now();
      pending = this.objects
        .get(key, { ifNoneMatch: known.etag })
        .then((got): true | Loaded => {
          if (got?.notModified) {
            known.checkedAt = now;
            return true;
          }
          if (this.known.get(key) === known) this.forget(key, known);
          return this.adopt(key, got, now);
        })
        .finally(() => this.confirming.delete(key));
      this.confirming.set(key, pending);
    }
    return pending;
  }

  /**
   * The index at `key` and its columns of the part `partKey` (undefined: not covered). A cached
   * copy that lacks the part is asked again once MISSING_PART_RECHECK_MS old: the part may be
   * younger than the copy (a fold's, or a flush's the builder has indexed since), and a conditional
   * GET costs less than its footer (~60,000 entries at 1 M series).
   */
  private async partOf(key: string, partKey: string, cached: Loaded | undefined): Promise<{ loaded: Loaded; part: IndexedPart | undefined }> {
    let loaded = await this.loadKey(key, cached);
    let part = loaded.parts.get(partKey);
    if (!part && loaded === cached) {
      loaded = await this.loadKey(key, cached, MISSING_PART_RECHECK_MS);
      part = loaded.parts.get(partKey);
    }
    return { loaded, part };
  }

  private load(ref: ShardRef, day: number): Promise<Loaded> {
    const key = seriesIndexKey(ref, day);
    return this.loadKey(key, this.cache.get(key));
  }

  /**
   * The index at `key` from its cached copy `cached` (undefined: none) while younger than
   * `maxAgeMs`, else fetched (once for concurrent callers).
   */
  private async loadKey(key: string, cached: Loaded | undefined, maxAgeMs = this.revalidateMs): Promise<Loaded> {
    const now = this.clock.now();
    if (cached && now - cached.checkedAt < maxAgeMs) return cached;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.fetch(key, cached, now).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async fetch(key: string, cached: Loaded | undefined, now: number): Promise<Loaded> {
    const got = await this.objects.get(key, cached?.etag ? { ifNoneMatch: cached.etag } : undefined);
    if (got?.notModified) {
      cached!.checkedAt = now;
      return cached!;
    }
    return this.adopt(key, got, now);
  }

  /** The index at `key` as a GET found it (null: none), decoded and cached. */
  private adopt(key: string, got: (GetResult & { notModified: false }) | null, now: number): Loaded {
    let next: Loaded;
    let bytes = 64;
    if (got === null) next = { index: null, parts: new Map(), etag: undefined, checkedAt: now };
    else {
      let index: SeriesIndex | null = null;
      try {
        index = decodeSeriesIndex(got.body);
      } catch (e) {
        // Derived data: a damaged index is one the builder will rewrite; until then, footers answer.
        if (!(e instanceof CorruptDataError)) throw e;
      }
      next = { index, parts: new Map(index?.parts.map((p) => [p.key, p])), etag: got.etag, checkedAt: now };
      if (index) bytes = decodedIndexBytes(index);
    }
    this.cache.set(key, next, bytes);
    return next;
  }
}

/**
 * Days of a range whose indexes a query reads ahead (prefetch): a dashboard's range. A longer one
 * reads mostly day objects, which no index covers, and would crowd the indexes' cache share.
 */
const PREFETCH_DAYS = 2;
/**
 * How old a cached index may be when it lacks a part a query reads before it is asked again (a
 * part the builder has not indexed yet keeps lacking: one conditional GET per this time).
 */
const MISSING_PART_RECHECK_MS = 500;
/** Selections kept per index, each of at most SELECTION_MAX_ORDINALS (4 bytes each): ≤ 512 KiB per index. */
const SELECTIONS_PER_INDEX = 32;
const SELECTION_MAX_ORDINALS = 4096;
/** Footer entries kept without their decoded indexes (Known), ~250 bytes each: ≤ ~16 MB. */
const KNOWN_ENTRIES = 65_536;
/** A part's selection of more entries than this is not kept (Known): as costly to hold as to compute. */
const KNOWN_PICK_ENTRIES = 1_024;

