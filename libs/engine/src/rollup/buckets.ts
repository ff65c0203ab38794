import type { FieldValue } from '@s4/core';
import type { Bucket } from '@s4/format';

/**
 * Aggregates of one field over one time bucket (the type is the rollup format's). Buckets over
 * disjoint samples combine exactly (sums add, min/max fold, first/last by timestamp), which is
 * what lets rollups of small buckets answer any step that is a multiple of them, and lets series
 * combine into groups.
 *
 * Only numbers are aggregated; NaN is skipped (it would poison sum, min and max), ±Infinity
 * counts like any number.
 */
export type { Bucket };

export const AGGS = ['avg', 'min', 'max', 'sum', 'count', 'first', 'last'] as const;
export type Agg = (typeof AGGS)[number];

export function bucketStart(ts: number, step: number): number {
  return Math.floor(ts / step) * step;
}

/** Buckets of `step` over sorted, unique timestamps; only numeric values count. */
export function bucketize(ts: readonly number[], values: readonly FieldValue[], step: number): Bucket[] {
  const out: Bucket[] = [];
  let cur: Bucket | undefined;
  for (let i = 0; i < ts.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || Number.isNaN(v)) continue;
    const t = ts[i]!;
    const start = bucketStart(t, step);
    if (!cur || cur.start !== start) {
      cur = { start, count: 0, sum: 0, min: v, max: v, first: v, firstTs: t, last: v, lastTs: t };
      out.push(cur);
    }
    cur.count++;
    cur.sum += v;
    if (v < cur.min) cur.min = v;
    if (v > cur.max) cur.max = v;
    cur.last = v;
    cur.lastTs = t;
  }
  return out;
}

/** Fold b into a (same bucket, disjoint samples). */
export function combine(a: Bucket, b: Bucket): void {
  a.count += b.count;
  a.sum += b.sum;
  if (b.min < a.min) a.min = b.min;
  if (b.max > a.max) a.max = b.max;
  // Across series two samples can share a timestamp: the smaller value is first, the larger last.
  if (b.firstTs < a.firstTs || (b.firstTs === a.firstTs && b.first < a.first)) {
    a.first = b.first;
    a.firstTs = b.firstTs;
  }
  if (b.lastTs > a.lastTs || (b.lastTs === a.lastTs && b.last > a.last)) {
    a.last = b.last;
    a.lastTs = b.lastTs;
  }
}

/** Merge bucket lists (each over disjoint samples) into buckets of `step`, ascending by start. */
export function mergeBuckets(lists: Iterable<readonly Bucket[]>, step: number): Bucket[] {
  const byStart = new Map<number, Bucket>();
  for (const list of lists)
    for (const b of list) {
      const start = bucketStart(b.start, step);
      const cur = byStart.get(start);
      if (cur) combine(cur, b);
      else byStart.set(start, { ...b, start });
    }
  return [...byStart.values()].sort((x, y) => x.start - y.start);
}

export function aggValue(b: Bucket, agg: Agg): number {
  switch (agg) {
    case 'avg':
      return b.sum / b.count;
    case 'min':
      return b.min;
    case 'max':
      return b.max;
    case 'sum':
      return b.sum;
    case 'count':
      return b.count;
    case 'first':
      return b.first;
    case 'last':
      return b.last;
  }
}

/** The column names of an aggregated answer: `avg(value)`. */
export function aggColumn(agg: Agg, field: string): string {
  return `${agg}(${field})`;
}
