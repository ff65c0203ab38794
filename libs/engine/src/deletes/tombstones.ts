import { PreconditionFailedError, tagsMatch, tombstonesKey, type ObjectStore, type SeriesColumns, type SeriesKey, type Tags } from '@s4/core';

/**
 * A deletion: every sample of the series matching `metric` + `tags` with `from <= ts < to`. It
 * is honoured by every query from the moment it is stored (raw, rollups, latest, series
 * listing), and the compactor rewrites the parts it touches without those samples.
 */
export interface Tombstone {
  readonly id: string;
  readonly metric: string;
  readonly tags: Tags;
  readonly from: number;
  readonly to: number;
  readonly createdAt: number;
}

/** What the query engine reads tombstones through. */
export interface TombstoneSource {
  /** The tombstones of a metric in a namespace, current as of this call. */
  forMetric(ns: string, metric: string): Promise<readonly Tombstone[]>;
  /** Every tombstone of a namespace. */
  list(ns: string): Promise<readonly Tombstone[]>;
}

interface Doc {
  version: 1;
  tombstones: Tombstone[];
}

/**
 * The tombstones of each namespace in one object (`v1/<ns>/tombstones.json`), revalidated with a
 * conditional GET (a 304 when unchanged, coalesced between concurrent queries) at most every
 * `revalidateMs`: a deletion stored by this process is honoured by its next query, one stored by
 * another process within `revalidateMs`. Queries must not pay an object-store round trip each,
 * nor fail on hot data while the store is down: when a revalidation fails, the last copy read is
 * used (no process can store a deletion while the store is unreachable).
 */
export class TombstoneStore implements TombstoneSource {
  private readonly seen = new Map<string, { etag: string | null; list: Tombstone[]; at: number }>();
  private readonly inflight = new Map<string, Promise<Tombstone[]>>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly revalidateMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  async forMetric(ns: string, metric: string): Promise<readonly Tombstone[]> {
    return (await this.list(ns)).filter((t) => t.metric === metric);
  }

  list(ns: string): Promise<Tombstone[]> {
    let p = this.inflight.get(ns);
    if (!p) {
      p = this.read(ns).finally(() => this.inflight.delete(ns));
      this.inflight.set(ns, p);
    }
    return p;
  }

  private async read(ns: string): Promise<Tombstone[]> {
    const cached = this.seen.get(ns);
    const at = this.now();
    if (cached && at - cached.at < this.revalidateMs) return cached.list;
    let got;
    try {
      got = await this.objects.get(tombstonesKey(ns), cached?.etag ? { ifNoneMatch: cached.etag } : undefined);
    } catch (e) {
      if (cached) return cached.list;
      throw e;
    }
    if (got === null) {
      this.seen.set(ns, { etag: null, list: [], at });
      return [];
    }
    if (got.notModified) {
      this.seen.set(ns, { ...cached!, at });
      return cached!.list;
    }
    const list = (JSON.parse(Buffer.from(got.body).toString('utf8')) as Doc).tombstones;
    this.seen.set(ns, { etag: got.etag, list, at });
    return list;
  }

  /** Store a tombstone (compare-and-swap, retried on conflict). */
  async add(ns: string, t: Tombstone): Promise<void> {
    const key = tombstonesKey(ns);
    for (let attempt = 0; ; attempt++) {
      const got = await this.objects.get(key);
      const current = got && !got.notModified ? (JSON.parse(Buffer.from(got.body).toString('utf8')) as Doc).tombstones : [];
      const doc: Doc = { version: 1, tombstones: [...current, t] };
      try {
        const put = await this.objects.put(key, Buffer.from(JSON.stringify(doc)), got && !got.notModified ? { ifMatch: got.etag } : { ifNoneMatch: '*' });
        this.seen.set(ns, { etag: put.etag, list: doc.tombstones, at: this.now() });
        return;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 10) throw e;
      }
    }
  }
}

/** The tombstones that apply to one series. */
export function tombstonesOf(key: SeriesKey, tombstones: readonly Tombstone[]): Tombstone[] {
  return tombstones.filter((t) => t.metric === key.metric && tagsMatch(key.tags, t.tags));
}

/** Columns without the samples a tombstone covers (the same object when none is). */
export function withoutDeleted(data: SeriesColumns, key: SeriesKey, tombstones: readonly Tombstone[]): SeriesColumns {
  if (tombstones.length === 0) return data;
  const mine = tombstonesOf(key, tombstones);
  if (mine.length === 0) return data;
  const keep: number[] = [];
  for (let i = 0; i < data.ts.length; i++) {
    const ts = data.ts[i]!;
    if (!mine.some((t) => ts >= t.from && ts < t.to)) keep.push(i);
  }
  if (keep.length === data.ts.length) return data;
  const fields: SeriesColumns['fields'] = Object.create(null) as SeriesColumns['fields'];
  for (const [f, col] of Object.entries(data.fields)) fields[f] = keep.map((i) => col[i]!);
  return { ts: keep.map((i) => data.ts[i]!), fields };
}

/** Whether any tombstone of the metric overlaps [from, to) (such a span cannot be answered from a rollup). */
export function overlapsAny(tombstones: readonly Tombstone[], from: number, to: number): boolean {
  return tombstones.some((t) => t.from < to && t.to > from);
}

/** Whether the series' whole range [from, to) is deleted (series listing hides it). */
export function coversRange(key: SeriesKey, tombstones: readonly Tombstone[], from: number, to: number): boolean {
  return tombstonesOf(key, tombstones).some((t) => t.from <= from && t.to >= to);
}
