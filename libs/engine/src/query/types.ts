import type { SeriesColumns, SeriesKey, Tags } from '@s4/core';
import type { TombstoneSource } from '../deletes/tombstones.js';
import type { Agg } from '../rollup/buckets.js';

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
