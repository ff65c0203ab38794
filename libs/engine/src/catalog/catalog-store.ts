import { DAY_MS, PreconditionFailedError, catalogDaysKey, catalogKey, type CatalogKind, type ObjectStore, type ShardRef } from '@s4/core';
import {
  MAX_CATALOG_METRICS,
  SEGMENT_TRAILER_BYTES,
  decodeCatalog,
  decodeDayList,
  encodeCatalog,
  encodeDayList,
  readTrailer,
  type Catalog,
  type CatalogEntry,
} from '@s4/format';

interface Cached<T> {
  value: T;
  etag: string | undefined;
  /** The shard's catalog generation when this copy was known to be current. */
  generation: number;
}

/**
 * The catalogs of every (shard, day): the only way queries learn which segment parts exist (no
 * LIST on the query path). Copies are cached and revalidated (a conditional GET, usually 304)
 * only when the shard's generation moved past the one they were read at.
 */
export class CatalogStore {
  private readonly cache = new Map<string, Cached<Catalog>>();
  private readonly dayLists = new Map<string, Cached<number[]>>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly kind: CatalogKind = 'segment',
  ) {}

  /** The catalog of the day containing `window`, current as of `generation`. */
  async read(ref: ShardRef, day: number, generation: number): Promise<Catalog> {
    return this.current(this.cache, catalogKey(ref, day, this.kind), generation, decodeCatalog, () => emptyCatalog(ref, day));
  }

  /** The days that have a catalog, current as of `generation`. */
  async days(ref: ShardRef, generation: number): Promise<number[]> {
    return this.current(this.dayLists, catalogDaysKey(ref, this.kind), generation, decodeDayList, () => []);
  }

  /** A cached object, revalidated with a conditional GET when `generation` moved past its copy. */
  private async current<T>(cache: Map<string, Cached<T>>, key: string, generation: number, decode: (b: Uint8Array) => T, empty: () => T): Promise<T> {
    const cached = cache.get(key);
    if (cached && cached.generation >= generation) return cached.value;
    const got = await this.objects.get(key, cached?.etag ? { ifNoneMatch: cached.etag } : undefined);
    let next: Cached<T>;
    if (got === null) next = { value: empty(), etag: undefined, generation };
    else if (got.notModified) next = { ...cached!, generation };
    else next = { value: decode(got.body), etag: got.etag, generation };
    cache.set(key, next);
    return next.value;
  }

  /** Entries of every day overlapping [from, to) whose window overlaps it. */
  async entries(ref: ShardRef, from: number, to: number, generation: number, windowMs: number): Promise<CatalogEntry[]> {
    const out: CatalogEntry[] = [];
    const first = Math.floor(from / DAY_MS) * DAY_MS;
    for (const day of await this.days(ref, generation)) {
      if (day < first || day >= to) continue;
      const c = await this.read(ref, day, generation);
      for (const e of c.entries) if (e.window < to && e.window + windowMs > from) out.push(e);
    }
    return out;
  }

  /** List `day` among the shard's days (before its catalog is written, so no catalog is ever unlisted). */
  private async listDay(ref: ShardRef, day: number): Promise<void> {
    const key = catalogDaysKey(ref, this.kind);
    for (let attempt = 0; ; attempt++) {
      const got = await this.objects.get(key);
      const days = got && !got.notModified ? decodeDayList(got.body) : [];
      if (days.includes(day)) return;
      const next = [...days, day].sort((a, b) => a - b);
      try {
        await this.objects.put(key, encodeDayList(next), got && !got.notModified ? { ifMatch: got.etag } : { ifNoneMatch: '*' });
        this.dayLists.delete(key);
        return;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 10) throw e;
      }
    }
  }

  /** Fresh from the store, for writers. */
  async load(ref: ShardRef, day: number): Promise<{ catalog: Catalog; etag: string | undefined }> {
    const got = await this.objects.get(catalogKey(ref, day, this.kind));
    if (got === null || got.notModified) return { catalog: emptyCatalog(ref, day), etag: undefined };
    return { catalog: decodeCatalog(got.body), etag: got.etag };
  }

  /**
   * Register a part. A conditional write (compare-and-swap on the ETag) so concurrent writers
   * never lose each other's entries; retried on conflict. `replaces`: entries the new one
   * supersedes (a newer rollup of the same window), dropped in the same write.
   */
  async add(ref: ShardRef, entry: CatalogEntry, replaces?: (e: CatalogEntry) => boolean): Promise<void> {
    const day = Math.floor(entry.window / DAY_MS) * DAY_MS;
    const key = catalogKey(ref, day, this.kind);
    await this.listDay(ref, day);
    for (let attempt = 0; ; attempt++) {
      const { catalog, etag } = await this.load(ref, day);
      const kept = catalog.entries.filter((e) => e.key !== entry.key && !replaces?.(e));
      const next: Catalog = { ...catalog, entries: [...kept, entry] };
      try {
        const put = await this.objects.put(key, encodeCatalog(next), etag ? { ifMatch: etag } : { ifNoneMatch: '*' });
        this.cache.set(key, { value: next, etag: put.etag, generation: this.cache.get(key)?.generation ?? 0 });
        return;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 10) throw e;
      }
    }
  }

  /**
   * Compare-and-swap of one day's catalog: `change` gets the current catalog (fresh from the
   * store) and returns the next one, or null to leave it as it is; on a conflict it is called
   * again on the newer copy. Returns the catalog written, or null when `change` declined.
   */
  async update(ref: ShardRef, day: number, change: (current: Catalog) => Catalog | null): Promise<Catalog | null> {
    const key = catalogKey(ref, day, this.kind);
    for (let attempt = 0; ; attempt++) {
      const { catalog, etag } = await this.load(ref, day);
      const next = change(catalog);
      if (next === null) return null;
      if (!etag) await this.listDay(ref, day);
      try {
        const put = await this.objects.put(key, encodeCatalog(next), etag ? { ifMatch: etag } : { ifNoneMatch: '*' });
        this.cache.set(key, { value: next, etag: put.etag, generation: this.cache.get(key)?.generation ?? 0 });
        return next;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 10) throw e;
      }
    }
  }

  /** Replace a day's catalog outright (catalog rebuild from the segment objects). */
  async replace(ref: ShardRef, day: number, entries: CatalogEntry[]): Promise<void> {
    const key = catalogKey(ref, day, this.kind);
    await this.listDay(ref, day);
    await this.objects.put(key, encodeCatalog({ ns: ref.ns, shard: ref.shard, day, entries }));
    this.cache.delete(key);
  }
}

export function emptyCatalog(ref: ShardRef, day: number): Catalog {
  return { ns: ref.ns, shard: ref.shard, day, entries: [] };
}

/** The next part number for a window: one past the largest registered. */
export function nextPart(catalog: Catalog, window: number): number {
  let max = 0;
  for (const e of catalog.entries) if (e.window === window && e.part > max) max = e.part;
  return max + 1;
}

/** The distinct metric names a catalog entry lists, or null when there are too many to list. */
export function metricsOf(names: Iterable<string>): string[] | null {
  const list = [...new Set(names)].sort();
  return list.length <= MAX_CATALOG_METRICS ? list : null;
}

/** The catalog entry of an object just written: size and footer location are read off its bytes. */
/** Samples and time span of a part's series (each series' `ts` ascending), as its catalog entry records them. */
export function spanOf(series: readonly { readonly ts: readonly number[] }[]): Pick<CatalogEntry, 'samples' | 'minTs' | 'maxTs'> {
  let samples = 0;
  let minTs = Infinity;
  let maxTs = -Infinity;
  for (const s of series) {
    const n = s.ts.length;
    if (n === 0) continue;
    samples += n;
    minTs = Math.min(minTs, s.ts[0]!);
    maxTs = Math.max(maxTs, s.ts[n - 1]!);
  }
  return { samples, minTs, maxTs };
}

export function entryOf(
  key: string,
  bytes: Uint8Array,
  e: Pick<CatalogEntry, 'window' | 'part' | 'fence' | 'samples' | 'minTs' | 'maxTs' | 'createdAt'> & { series: readonly { metric: string }[] },
): CatalogEntry {
  const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
  return { ...e, key, size: bytes.length, footerOffset, footerLength, series: e.series.length, metrics: metricsOf(e.series.map((s) => s.metric)) };
}
