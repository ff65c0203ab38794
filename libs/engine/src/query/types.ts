import type { SeriesColumns, SeriesKey, TagMatcher, Tags } from '@s4/core';
import type { BlockColumns } from '@s4/format';
import type { TombstoneSource } from '../deletes/tombstones.js';
import type { Agg } from '../rollup/buckets.js';

export interface QuerySpec {
  readonly metric: string;
  readonly tags: Tags;
  /** Tag matchers (=, !=, =~, !~), all of which must hold besides `tags` (libs/core matchers.ts). */
  readonly matchers?: readonly TagMatcher[] | undefined;
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
  /**
   * Set when the series was answered straight from block columns (columnar.ts): the same
   * samples as runs of decoded blocks in time order, and the answer's field names in order.
   * Writers stream from them; `ts` and `fields` are then built on first use.
   */
  readonly slices?: readonly ColumnSlice[];
  readonly names?: readonly string[];
}

/** Samples [lo, hi) of one block's decoded columns. */
export interface ColumnSlice {
  readonly columns: BlockColumns;
  readonly lo: number;
  readonly hi: number;
}

export interface QueryEngineOptions {
  readonly ns: string;
  readonly shards: number;
  /** Object reads in flight per query. */
  readonly concurrency: number;
  /** Byte budget of the footer, series index and block caches. */
  readonly cacheBytes: number;
  /** Blocks of one object closer than this are fetched with one ranged GET (default 256 KiB). */
  readonly coalesceGapBytes?: number | undefined;
  /** Use the series indexes (default true); off, every part's footer is read. */
  readonly seriesIndex?: boolean | undefined;
  /** With several namespaces: the namespace of a metric, and every namespace (series listing); else `ns`, `shards`. */
  readonly route?: (metric: string) => { readonly ns: string; readonly shards: number };
  readonly namespaces?: () => readonly { readonly ns: string; readonly shards: number }[];
  /** Deleted series and ranges, hidden from every answer (libs/engine deletes). */
  readonly tombstones?: TombstoneSource;
}

/** Counters a /metrics endpoint can show. */
export interface QueryCounters {
  objectReads: number;
  objectBytes: number;
}
