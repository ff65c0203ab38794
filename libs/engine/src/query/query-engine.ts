import type { HotTier, ObjectStore, SeriesKey, ShardRef, TagMatcher, Tags } from '@s4/core';
import type { BlockColumns, SegmentFooter } from '@s4/format';
import type { CatalogStore } from '../catalog/catalog-store.js';
import { aggregate } from './aggregate.js';
import { columnarSeries } from './columnar.js';
import { ByteBudgetCache, FrequencyAdmissionCache } from './cache.js';
import { reduceToPixels } from './downsample.js';
import { latest } from './latest.js';
import { QueryPlanner } from './planner.js';
import { mergeWindows, RawReader } from './raw-reader.js';
import type { Readers } from './readers.js';
import { RollupReader } from './rollup-reader.js';
import { SeriesIndexStore } from './series-index-store.js';
import { labelNames, labelValues, listSeries, type SeriesSelector } from './series-list.js';
import { deletedFor } from './deleted.js';
import { tombstonesOf, withoutDeleted, type Tombstone } from '../deletes/tombstones.js';
import type { AggregateSpec, QueryCounters, QueryEngineOptions, QuerySpec, SeriesResult } from './types.js';

export type { AggregateSpec, ColumnSlice, QueryCounters, QueryEngineOptions, QuerySpec, SeriesResult } from './types.js';

/**
 * Answers a selector over [from, to): per shard (in parallel), hot logs and the catalog
 * generation are read first and atomically, then the catalog, then footers and blocks of the
 * parts that may hold matching series. Per series and window the sources are merged oldest part
 * first, hot data last, so the newest write of a timestamp wins.
 *
 * A facade over the parts: the planner (shards, catalog entries, rollup windows), the raw reader
 * (footers, blocks, ranged reads), the rollup reader, latest, series listing and aggregation.
 */
export class QueryEngine {
  readonly counters: QueryCounters = { objectReads: 0, objectBytes: 0 };
  private readonly readers: Readers;
  private readonly index: SeriesIndexStore | undefined;

  constructor(
    hot: HotTier,
    objects: ObjectStore,
    catalogs: CatalogStore,
    private readonly options: QueryEngineOptions,
    rollups?: CatalogStore,
    clock: { now(): number } = Date,
  ) {
    // An eighth for footers (with indexes, read only for parts not indexed yet), a quarter for
    // series indexes, the rest for decoded blocks. A query of one metric visits every shard's
    // index: with an eighth (32 MB of 256), the 16 indexes of 300,000 series (36 MB decoded) did
    // not fit and LRU evicted each just before its next use, so every query decoded all 16
    // (1 % tag query 6.5 ms → 400 ms). Indexes and blocks both admit by frequency, so a scan
    // larger than the budget keeps most of what it touches between repeats.
    // Footers and blocks share the rest of the budget: footers take up to an eighth, blocks what
    // footers leave (a bulk read of records whose decoded blocks need more than five eighths, R4
    // at 256 MiB, then keeps them all when the footers are few, instead of decoding a part of
    // them again on every read; issue 11).
    const eighth = Math.floor(options.cacheBytes / 8);
    const quarter = 2 * eighth;
    // Decoded footers and footers as stored (read by selection) share the eighth, under keys of their own.
    const footers = new ByteBudgetCache<SegmentFooter | Uint8Array>(eighth);
    const blocks = new FrequencyAdmissionCache<BlockColumns>(options.cacheBytes - quarter, 10, () => footers.bytes);
    const share = <V extends SegmentFooter | Uint8Array>(prefix: string, is: (v: SegmentFooter | Uint8Array) => v is V) => ({
      get: (key: string) => {
        const v = footers.get(prefix + key);
        return v !== undefined && is(v) ? v : undefined;
      },
      set: (key: string, value: V, bytes: number) => {
        footers.set(prefix + key, value, bytes);
        blocks.trim();
      },
    });
    const caches = {
      footers: share('', (v): v is SegmentFooter => !(v instanceof Uint8Array)),
      footerBytes: share('\u0000stored:', (v): v is Uint8Array => v instanceof Uint8Array),
      blocks,
    };
    const index = options.seriesIndex === false ? undefined : new SeriesIndexStore(objects, quarter, clock);
    this.index = index;
    const raw = new RawReader(objects, caches, this.counters, options.concurrency, index, options.coalesceGapBytes);
    this.readers = {
      hot,
      planner: new QueryPlanner(catalogs, options, rollups, clock),
      raw,
      rollups: new RollupReader(raw, options.concurrency),
      concurrency: options.concurrency,
      tombstones: options.tombstones,
    };
  }

  /** Matching series, one at a time, shard by shard, each sorted and de-duplicated. */
  async *query(spec: QuerySpec): AsyncIterable<SeriesResult> {
    const shards = this.readers.planner.shards(spec.metric);
    this.index?.prefetch(shards, spec.from, spec.to);
    const deleted = deletedFor(this.readers, spec.metric);
    // Shards are read ahead with bounded concurrency but yielded in order, so memory stays
    // bounded by the shards in flight rather than by the whole result.
    const width = Math.max(1, Math.min(shards.length, Math.ceil(this.options.concurrency / 4)));
    const pending = new Map<number, Promise<SeriesResult[]>>();
    const start = (i: number) => {
      if (i >= shards.length) return;
      const read = this.queryShard(shards[i]!, spec, deleted);
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

  /** Series (metric + tags) with data in [from, to), from hot data, series indexes and segment footers. */
  async series(metric: string | undefined, tags: Tags, from: number, to: number, matchers?: readonly TagMatcher[]): Promise<SeriesKey[]> {
    return listSeries(this.readers, { metric, tags, matchers, from, to }, this.index);
  }

  /** Tag keys of the selected series with data in [from, to), sorted. */
  async labels(selector: SeriesSelector): Promise<string[]> {
    return labelNames(this.readers, selector, this.index);
  }

  /** Values of tag `key` of the selected series with data in [from, to), sorted. */
  async labelValues(key: string, selector: SeriesSelector): Promise<string[]> {
    return labelValues(this.readers, key, selector, this.index);
  }

  /**
   * The latest sample in [from, to) of every matching series. Windows are visited newest first;
   * a series found in a newer window is not read again in older ones.
   */
  async latest(spec: QuerySpec): Promise<SeriesResult[]> {
    return latest(this.readers, spec);
  }

  /**
   * One value per step bucket and agg, per series or per group. Whole hour windows inside the
   * range are answered from their rollup when it was computed from exactly the window's current
   * parts and no hot data of the selector waits in that window; everything else from raw data.
   */
  async aggregate(spec: AggregateSpec): Promise<SeriesResult[]> {
    return aggregate(this.readers, spec);
  }

  private async queryShard(ref: ShardRef, spec: QuerySpec, deleted: (ns: string) => Promise<readonly Tombstone[]>): Promise<SeriesResult[]> {
    const { hot, planner, raw } = this.readers;
    const scan = await hot.scan(ref, spec.metric, spec.from, spec.to, spec);
    const entries = await planner.segmentEntries(ref, spec, scan.generation);
    const bySeries = await raw.sources(spec, entries, scan.logs);
    const dead = await deleted(ref.ns);
    const out: SeriesResult[] = [];
    for (const [id, { key, windows }] of bySeries) {
      // A deleted range is cut from merged columns; the column-slice path answers only untouched series.
      const columnar = spec.maxPoints === undefined && tombstonesOf(key, dead).length === 0 ? columnarSeries(id, key, windows, spec.from, spec.to, spec.fields) : null;
      if (columnar) {
        if (columnar.slices.length > 0) out.push(columnar);
        continue;
      }
      let data = withoutDeleted(mergeWindows(windows, spec, spec.fields), key, dead);
      if (spec.maxPoints !== undefined) data = reduceToPixels(data, spec.from, spec.to, spec.maxPoints);
      if (data.ts.length > 0) out.push({ id, metric: key.metric, tags: key.tags, ...data });
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : 1));
  }
}
