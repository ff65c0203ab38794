import {
  DAY_MS,
  WINDOW_MS,
  allShards,
  canonicalSeries,
  nameMap,
  own,
  rollupKey,
  tagsMatch,
  type HotLog,
  type HotTier,
  type ObjectStore,
  type SeriesColumns,
  type SeriesKey,
  type ShardRef,
  type Tags,
} from '@s4/core';
import { decodeBlock, decodeFooter, type CatalogEntry, type FooterEntry, type SegmentFooter } from '@s4/format';
import type { CatalogStore } from '../catalog/catalog-store.js';
import { mapLimit } from '../concurrency.js';
import { decodeRecords } from '../write/records.js';
import { ByteBudgetCache } from './cache.js';
import { clip, concatWindows, mergeSources, type Source } from './merge.js';
import { aggColumn, aggValue, bucketize, columnsToBuckets, mergeBuckets, type Agg, type Bucket } from '../rollup/buckets.js';
import { expectedDayKey, isDayRollup, partsHash } from '../rollup/rollup-builder.js';
import { reduceToPixels } from './downsample.js';

export interface QuerySpec {
  readonly metric: string;
  readonly tags: Tags;
  /** Inclusive, ms. */
  readonly from: number;
  /** Exclusive, ms. */
  readonly to: number;
  /** Only these fields (all when undefined). */
  readonly fields?: readonly string[] | undefined;
  /** Raw queries: at most this many points per series, keeping the line's shape. */
  readonly maxPoints?: number | undefined;
}

export interface AggregateSpec extends QuerySpec {
  /** Bucket width in ms; buckets are aligned to the epoch and half-open. */
  readonly step: number;
  readonly aggs: readonly Agg[];
  /** Combine series sharing these tag values; [] combines all; undefined keeps series apart. */
  readonly groupBy?: readonly string[] | undefined;
}

export interface SeriesResult extends SeriesKey, SeriesColumns {
  readonly id: string;
}

export interface QueryEngineOptions {
  readonly ns: string;
  readonly shards: number;
  /** Object reads in flight per query. */
  readonly concurrency: number;
  /** Byte budget of the footer + block cache. */
  readonly cacheBytes: number;
}

/** Counters a /metrics endpoint can show. */
export interface QueryCounters {
  objectReads: number;
  objectBytes: number;
}

/** Blocks closer than this are fetched with one ranged GET. */
const COALESCE_GAP = 256 * 1024;

/**
 * Answers a selector over [from, to): per shard (in parallel), hot logs and the catalog
 * generation are read first and atomically, then the catalog, then footers and blocks of the
 * parts that may hold matching series. Per series and window the sources are merged oldest part
 * first, hot data last, so the newest write of a timestamp wins.
 */
export class QueryEngine {
  private readonly footers: ByteBudgetCache<SegmentFooter>;
  /** Decoded blocks: a warm query pays neither decompression nor decoding. */
  private readonly blocks: ByteBudgetCache<SeriesColumns>;
  readonly counters: QueryCounters = { objectReads: 0, objectBytes: 0 };

  constructor(
    private readonly hot: HotTier,
    private readonly objects: ObjectStore,
    private readonly catalogs: CatalogStore,
    private readonly options: QueryEngineOptions,
    private readonly rollups?: CatalogStore,
    private readonly clock: { now(): number } = Date,
  ) {
    this.footers = new ByteBudgetCache(Math.floor(options.cacheBytes / 4));
    this.blocks = new ByteBudgetCache(options.cacheBytes - Math.floor(options.cacheBytes / 4));
  }

  /** Matching series, one at a time, shard by shard, each sorted and de-duplicated. */
  async *query(spec: QuerySpec): AsyncIterable<SeriesResult> {
    const shards = allShards(this.options.shards);
    // Shards are read ahead with bounded concurrency but yielded in order, so memory stays
    // bounded by the shards in flight rather than by the whole result.
    const width = Math.max(1, Math.min(shards.length, Math.ceil(this.options.concurrency / 4)));
    const pending = new Map<number, Promise<SeriesResult[]>>();
    const start = (i: number) => {
      if (i >= shards.length) return;
      const read = this.queryShard({ ns: this.options.ns, shard: shards[i]! }, spec);
      // Reads started ahead are abandoned when an earlier one fails or the consumer stops early;
      // their failures are already answered by the first one and must not surface as unhandled.
      read.catch(() => undefined);
      pending.set(i, read);
    };
    for (let i = 0; i < width; i++) start(i);
    for (let i = 0; i < shards.length; i++) {
      const results = await pending.get(i)!;
      pending.delete(i);
      start(i + width);
      yield* results;
    }
  }

  /** Series (metric + tags) with data in [from, to), from hot data and segment footers. */
  async series(metric: string | undefined, tags: Tags, from: number, to: number): Promise<SeriesKey[]> {
    const found = new Map<string, SeriesKey>();
    await mapLimit(allShards(this.options.shards), this.options.concurrency, async (shard) => {
      const ref = { ns: this.options.ns, shard };
      const generation = await this.hot.generation(ref);
      for (const k of await this.hot.seriesIn(ref, metric, from, to)) if (tagsMatch(k.tags, tags)) found.set(canonicalSeries(k), k);
      const entries = (await this.catalogs.entries(ref, from, to, generation, WINDOW_MS)).filter((e) => metric === undefined || mayHold(e, metric));
      await mapLimit(entries, 4, async (e) => {
        const footer = await this.footer(e);
        for (const s of footer.series)
          if ((metric === undefined || s.metric === metric) && tagsMatch(s.tags, tags) && s.maxTs >= from && s.minTs < to)
            found.set(canonicalSeries(s), { metric: s.metric, tags: s.tags });
      });
    });
    // Keyed by canonical form: hot-tier and footer copies of one series may list tags in another order.
    return [...found].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, k]) => k);
  }

  private async queryShard(ref: ShardRef, spec: QuerySpec): Promise<SeriesResult[]> {
    const scan = await this.hot.scan(ref, spec.metric, spec.from, spec.to);
    const entries = await this.segmentEntries(ref, spec, scan.generation);
    const bySeries = await this.rawSources(spec, entries, scan.logs);
    const out: SeriesResult[] = [];
    for (const [id, { key, windows }] of bySeries) {
      let data = this.mergeWindows(windows, spec, spec.fields);
      if (spec.maxPoints !== undefined) data = reduceToPixels(data, spec.from, spec.to, spec.maxPoints);
      if (data.ts.length > 0) out.push({ id, metric: key.metric, tags: key.tags, ...data });
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  private mergeWindows(windows: Map<number, Source[]>, spec: QuerySpec, fields: readonly string[] | undefined): SeriesColumns {
    const parts = [...windows.keys()].sort((a, b) => a - b).map((w) => mergeSources(windows.get(w)!));
    return clip(concatWindows(parts), spec.from, spec.to, fields);
  }

  private async segmentEntries(ref: ShardRef, spec: QuerySpec, generation: number): Promise<CatalogEntry[]> {
    return (await this.catalogs.entries(ref, spec.from, spec.to, generation, WINDOW_MS))
      .filter((e) => mayHold(e, spec.metric) && e.maxTs >= spec.from && e.minTs < spec.to)
      .sort((a, b) => a.window - b.window || a.fence - b.fence || a.part - b.part);
  }

  /**
   * The latest sample in [from, to) of every matching series. Windows are visited newest first;
   * a series found in a newer window is not read again in older ones.
   */
  async latest(spec: QuerySpec): Promise<SeriesResult[]> {
    const perShard = await mapLimit(allShards(this.options.shards), Math.max(1, Math.ceil(this.options.concurrency / 4)), async (shard) => {
      const ref = { ns: this.options.ns, shard };
      const scan = await this.hot.scan(ref, spec.metric, spec.from, spec.to);
      const entries = await this.segmentEntries(ref, spec, scan.generation);
      const windows = [...new Set([...entries.map((e) => e.window), ...scan.logs.map((l) => l.window)])].sort((a, b) => b - a);
      const found = new Map<string, SeriesResult>();
      for (const w of windows) {
        const sources = await this.rawSources(
          spec,
          entries.filter((e) => e.window === w),
          scan.logs.filter((l) => l.window === w && !found.has(l.id)),
          found,
        );
        for (const [id, { key, windows: ws }] of sources) {
          if (found.has(id)) continue;
          const data = this.mergeWindows(ws, spec, spec.fields);
          const n = data.ts.length;
          if (n === 0) continue;
          const fields: SeriesColumns['fields'] = nameMap();
          for (const [f, col] of Object.entries(data.fields)) if (col[n - 1] !== null) fields[f] = [col[n - 1]!];
          found.set(id, { id, metric: key.metric, tags: key.tags, ts: [data.ts[n - 1]!], fields });
        }
      }
      return [...found.values()];
    });
    return perShard.flat().sort((a, b) => (canonicalSeries(a) < canonicalSeries(b) ? -1 : 1));
  }

  /** Per matching series and window: the raw sources in ascending precedence (parts, then hot). */
  private async rawSources(spec: QuerySpec, entries: readonly CatalogEntry[], logs: readonly HotLog[], skip?: ReadonlyMap<string, unknown>) {
    const bySeries = new Map<string, { key: SeriesKey; windows: Map<number, Source[]> }>();
    const sourcesOf = (id: string, key: SeriesKey, window: number) => {
      let s = bySeries.get(id);
      if (!s) bySeries.set(id, (s = { key, windows: new Map() }));
      let list = s.windows.get(window);
      if (!list) s.windows.set(window, (list = []));
      return list;
    };
    const perEntry = await mapLimit(entries, Math.max(1, Math.ceil(this.options.concurrency / 2)), async (entry) => {
      const footer = await this.footer(entry);
      const wanted = candidates(footer, spec).filter((s) => !skip?.has(s.id) && s.metric === spec.metric && tagsMatch(s.tags, spec.tags) && s.maxTs >= spec.from && s.minTs < spec.to);
      return { entry, wanted, blocks: await this.readBlocks(entry, wanted) };
    });
    // Insert in catalog order (window, fence, part), so precedence is right whatever finished first.
    for (const { entry, wanted, blocks } of perEntry)
      wanted.forEach((s, i) => sourcesOf(s.id, { metric: s.metric, tags: s.tags }, entry.window).push({ data: blocks[i]!, sortedUnique: true }));
    for (const log of logs) {
      if (!tagsMatch(log.key.tags, spec.tags)) continue;
      sourcesOf(log.id, log.key, log.window).push({ data: decodeRecords(log.data), sortedUnique: false });
    }
    return bySeries;
  }

  /**
   * One value per step bucket and agg, per series or per group. Whole hour windows inside the
   * range are answered from their rollup when it was computed from exactly the window's current
   * parts and no hot data of the selector waits in that window; everything else from raw data.
   */
  async aggregate(spec: AggregateSpec): Promise<SeriesResult[]> {
    const perShard = await mapLimit(allShards(this.options.shards), Math.max(1, Math.ceil(this.options.concurrency / 4)), (shard) =>
      this.aggregateShard({ ns: this.options.ns, shard }, spec),
    );
    const groups = new Map<string, { key: SeriesKey; fields: Map<string, Bucket[][]> }>();
    for (const list of perShard)
      for (const s of list) {
        const tags = spec.groupBy === undefined ? s.key.tags : nameMap(spec.groupBy.flatMap((k) => { const v = own(s.key.tags, k); return v === undefined ? [] : [[k, v] as const]; }));
        const gk = spec.groupBy === undefined ? s.id : JSON.stringify(Object.entries(tags).sort());
        let g = groups.get(gk);
        if (!g) groups.set(gk, (g = { key: { metric: s.key.metric, tags }, fields: new Map() }));
        for (const [f, buckets] of s.fields) {
          let l = g.fields.get(f);
          if (!l) g.fields.set(f, (l = []));
          l.push(buckets);
        }
      }
    const out: SeriesResult[] = [];
    for (const [gk, g] of groups) {
      const merged = new Map([...g.fields].map(([f, lists]) => [f, mergeBuckets(lists, spec.step)] as const));
      const ts = [...new Set([...merged.values()].flatMap((l) => l.map((b) => b.start)))].sort((a, b) => a - b);
      if (ts.length === 0) continue;
      const index = new Map(ts.map((t, i) => [t, i]));
      const fields = nameMap<(number | null)[]>();
      for (const [f, buckets] of [...merged].sort(([a], [b]) => (a < b ? -1 : 1)))
        for (const agg of spec.aggs) {
          const col = new Array<number | null>(ts.length).fill(null);
          for (const b of buckets) col[index.get(b.start)!] = aggValue(b, agg);
          fields[aggColumn(agg, f)] = col;
        }
      out.push({ id: gk, metric: g.key.metric, tags: g.key.tags, ts, fields });
    }
    return out.sort((a, b) => (canonicalSeries(a) < canonicalSeries(b) ? -1 : 1));
  }

  private async aggregateShard(ref: ShardRef, spec: AggregateSpec): Promise<{ id: string; key: SeriesKey; fields: Map<string, Bucket[]> }[]> {
    const scan = await this.hot.scan(ref, spec.metric, spec.from, spec.to);
    const entries = await this.segmentEntries(ref, spec, scan.generation);
    const resolution = spec.step % 3_600_000 === 0 ? '1h' : spec.step % 60_000 === 0 ? '1m' : null;

    // Windows answered from rollups: whole, current, and without waiting hot data. Keys of
    // `rolled` are hour windows, or day starts for day rollups (whose hours go in `skipRaw`).
    const rolled = new Map<number, CatalogEntry>();
    const skipRaw = new Set<number>();
    if (resolution && this.rollups) {
      const hotWindows = new Set(scan.logs.filter((l) => tagsMatch(l.key.tags, spec.tags)).map((l) => l.window));
      const partsOf = new Map<number, CatalogEntry[]>();
      for (const e of entries) {
        let l = partsOf.get(e.window);
        if (!l) partsOf.set(e.window, (l = []));
        l.push(e);
      }
      // Rollup registrations do not move the shard generation; revalidate them every few seconds.
      const rollupEntries = await this.rollups.entries(ref, spec.from, spec.to, Math.floor(this.clock.now() / 5_000), WINDOW_MS);
      const byKey = new Map(rollupEntries.map((e) => [e.key, e]));
      const hourly = new Map<number, string>();
      for (const [window, parts] of partsOf) hourly.set(window, rollupKey(ref, window, partsHash(parts)));
      // Whole days first: one object per shard-day when the step is a multiple of an hour.
      const covered = new Set<number>();
      if (resolution === '1h') {
        const days = new Set([...hourly.keys()].map((w) => Math.floor(w / DAY_MS) * DAY_MS));
        for (const day of days) {
          if (day < spec.from || day + DAY_MS > spec.to || [...hotWindows].some((w) => w >= day && w < day + DAY_MS)) continue;
          const windows = [...hourly.keys()].filter((w) => w >= day && w < day + DAY_MS);
          const r = byKey.get(expectedDayKey(ref, day, windows.map((w) => hourly.get(w)!)));
          if (!r || !mayHold(r, spec.metric)) continue;
          rolled.set(day, r);
          for (const w of windows) covered.add(w);
        }
      }
      for (const [window, key] of hourly) {
        if (covered.has(window) || window < spec.from || window + WINDOW_MS > spec.to || hotWindows.has(window)) continue;
        const r = byKey.get(key);
        if (r && mayHold(r, spec.metric)) rolled.set(window, r);
      }
      for (const w of covered) skipRaw.add(w);
    }

    const series = new Map<string, { key: SeriesKey; fields: Map<string, Bucket[][]> }>();
    const add = (id: string, key: SeriesKey, field: string, buckets: Bucket[]) => {
      if (spec.fields && !spec.fields.includes(field)) return;
      let s = series.get(id);
      if (!s) series.set(id, (s = { key, fields: new Map() }));
      let l = s.fields.get(field);
      if (!l) s.fields.set(field, (l = []));
      l.push(buckets);
    };

    const fromRollup = (w: number) => skipRaw.has(w) || (rolled.has(w) && !isDayRollup(rolled.get(w)!.key));
    const raw = await this.rawSources(
      spec,
      entries.filter((e) => !fromRollup(e.window)),
      scan.logs.filter((l) => !fromRollup(l.window)),
    );
    for (const [id, { key, windows }] of raw) {
      const data = this.mergeWindows(windows, spec, spec.fields);
      for (const [field, col] of Object.entries(data.fields)) add(id, key, field, bucketize(data.ts, col, spec.step));
    }

    const suffix = `.${resolution}`;
    await mapLimit([...rolled.values()], Math.max(1, Math.ceil(this.options.concurrency / 2)), async (entry) => {
      const footer = await this.footer(entry);
      const wanted = candidates(footer, spec).filter((s) => s.id.endsWith(suffix) && s.metric === spec.metric && tagsMatch(s.tags, spec.tags));
      const blocks = await this.readBlocks(entry, wanted);
      wanted.forEach((s, i) => {
        const data = blocks[i]!;
        for (const [field, buckets] of columnsToBuckets(data.ts, data.fields)) add(s.id.slice(0, -suffix.length), { metric: s.metric, tags: s.tags }, field, buckets);
      });
    });

    return [...series].map(([id, s]) => ({ id, key: s.key, fields: new Map([...s.fields].map(([f, lists]) => [f, mergeBuckets(lists, spec.step)] as const)) }));
  }

  private async footer(entry: CatalogEntry): Promise<SegmentFooter> {
    const cached = this.footers.get(entry.key);
    if (cached) return cached;
    const bytes = await this.read(entry.key, entry.footerOffset, entry.footerLength);
    const footer = decodeFooter(bytes);
    this.footers.set(entry.key, footer, entry.footerLength * 3);
    return footer;
  }

  /**
   * Each wanted block, decoded; neighbouring blocks share one ranged GET. Cached columns are
   * shared between queries, so callers must treat them as read-only.
   */
  private async readBlocks(entry: CatalogEntry, wanted: readonly FooterEntry[]): Promise<SeriesColumns[]> {
    const out = new Array<SeriesColumns>(wanted.length);
    const missing: number[] = [];
    wanted.forEach((s, i) => {
      const hit = this.blocks.get(`${entry.key}#${s.offset}`);
      if (hit) out[i] = hit;
      else missing.push(i);
    });
    missing.sort((a, b) => wanted[a]!.offset - wanted[b]!.offset);
    const runs: number[][] = [];
    for (const i of missing) {
      const run = runs[runs.length - 1];
      const last = run && wanted[run[run.length - 1]!]!;
      if (run && last && wanted[i]!.offset - (last.offset + last.length) <= COALESCE_GAP) run.push(i);
      else runs.push([i]);
    }
    await mapLimit(runs, 8, async (run) => {
      const first = wanted[run[0]!]!;
      const last = wanted[run[run.length - 1]!]!;
      const bytes = await this.read(entry.key, first.offset, last.offset + last.length - first.offset);
      for (const i of run) {
        const s = wanted[i]!;
        const columns = decodeBlock(bytes.subarray(s.offset - first.offset, s.offset - first.offset + s.length), s);
        out[i] = columns;
        this.blocks.set(`${entry.key}#${s.offset}`, columns, decodedBytes(columns));
      }
    });
    return out;
  }

  private async read(key: string, offset: number, length: number): Promise<Uint8Array> {
    const got = await this.objects.get(key, { range: { offset, length } });
    if (!got || got.notModified) throw new Error(`segment ${key} is registered in the catalog but missing from the object store`);
    this.counters.objectReads++;
    this.counters.objectBytes += got.body.length;
    return got.body;
  }
}

/** Per cached footer: its entries by metric and by tag pair, so a selector looks only at candidates. */
const footerIndexes = new WeakMap<SegmentFooter, Map<string, FooterEntry[]>>();

function candidates(footer: SegmentFooter, spec: QuerySpec): readonly FooterEntry[] {
  let index = footerIndexes.get(footer);
  if (!index) {
    index = new Map();
    const put = (k: string, e: FooterEntry) => {
      let l = index!.get(k);
      if (!l) index!.set(k, (l = []));
      l.push(e);
    };
    for (const e of footer.series) {
      put(`m\u0000${e.metric}`, e);
      for (const [k, v] of Object.entries(e.tags)) put(`t\u0000${k}\u0000${v}`, e);
    }
    footerIndexes.set(footer, index);
  }
  let best = index.get(`m\u0000${spec.metric}`) ?? [];
  for (const [k, v] of Object.entries(spec.tags)) {
    const l = index.get(`t\u0000${k}\u0000${v}`) ?? [];
    if (l.length < best.length) best = l;
  }
  return best;
}

/** Roughly what decoded columns occupy: 8 bytes a value, more for strings and nested values. */
function decodedBytes(c: SeriesColumns): number {
  let n = 64 + c.ts.length * 8;
  for (const col of Object.values(c.fields)) {
    n += 32 + col.length * 8;
    const sample = col.find((v) => v !== null && typeof v !== 'number' && typeof v !== 'boolean');
    if (sample !== undefined) n += col.length * (typeof sample === 'string' ? sample.length * 2 + 16 : JSON.stringify(sample).length * 2);
  }
  return n;
}

function mayHold(entry: CatalogEntry, metric: string): boolean {
  return entry.metrics === null || entry.metrics.includes(metric);
}

