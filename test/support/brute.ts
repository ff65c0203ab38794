import type { FieldValue } from '@s4/core';
import { AGGS, type Agg } from '@s4/engine';

export const ALL_AGGS: Agg[] = [...AGGS];

/**
 * The obvious computation of step aggregates over de-duplicated raw samples, for comparing
 * with what the store answers: numbers only, NaN skipped, buckets epoch-aligned and half-open.
 */
export function bruteAggregate(
  series: { ts: number[]; values: FieldValue[] }[],
  from: number,
  to: number,
  step: number,
  aggs: Agg[],
): { ts: number[]; cols: Record<string, number[]> } {
  const buckets = new Map<number, { t: number; v: number }[]>();
  for (const s of series)
    s.ts.forEach((t, i) => {
      const v = s.values[i];
      if (t < from || t >= to || typeof v !== 'number' || Number.isNaN(v)) return;
      const b = Math.floor(t / step) * step;
      let l = buckets.get(b);
      if (!l) buckets.set(b, (l = []));
      l.push({ t, v });
    });
  const ts = [...buckets.keys()].sort((a, b) => a - b);
  const cols: Record<string, number[]> = {};
  for (const agg of aggs)
    cols[agg] = ts.map((b) => {
      const pts = buckets.get(b)!.sort((x, y) => x.t - y.t || x.v - y.v); // ties across series: smaller value first
      const vs = pts.map((p) => p.v);
      const sum = vs.reduce((a, v) => a + v, 0);
      switch (agg) {
        case 'avg':
          return sum / vs.length;
        case 'sum':
          return sum;
        case 'count':
          return vs.length;
        case 'min':
          return Math.min(...vs);
        case 'max':
          return Math.max(...vs);
        case 'first':
          return vs[0]!;
        case 'last':
          return vs[vs.length - 1]!;
      }
    });
  return { ts, cols };
}

/** Equal, allowing float rounding in sums and averages (summation order differs). */
export function closeEnough(a: number | null, b: number | null): boolean {
  if (a === null || b === null) return a === b;
  if (Object.is(a, b)) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}
