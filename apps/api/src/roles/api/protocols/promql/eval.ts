import { nameMap } from '@s4/core';
import type { Expr, RangeExpr, SelectorExpr } from './parse.js';

/** Prometheus' default lookback: an instant selector sees the latest sample at most 5 min old. */
export const LOOKBACK_MS = 5 * 60_000;

/** Samples of one series, ascending, as the fetch step hands them over. */
export interface RawSeries {
  readonly labels: Record<string, string>;
  readonly ts: readonly number[];
  readonly values: readonly number[];
}

/** One output series: a value per evaluation step, undefined where it has none. */
export interface StepSeries {
  readonly labels: Record<string, string>;
  readonly values: (number | undefined)[];
}

/** Evaluation steps: start, start + step, ... up to end (ms, inclusive). */
export interface Steps {
  readonly start: number;
  readonly end: number;
  readonly step: number;
}

export function stepTimes({ start, end, step }: Steps): number[] {
  const out: number[] = [];
  for (let t = start; t <= end; t += step) out.push(t);
  return out;
}

/** The time range of raw samples a selector needs for these steps: [from, to] in ms. */
export function neededRange(sel: SelectorExpr, range: number, steps: Steps): { from: number; to: number } {
  return { from: steps.start - sel.offset - range, to: steps.end - sel.offset };
}

/** Every selector of an expression with the range it reads back from each step (lookback or `[range]`). */
export function selectorsOf(e: Expr): { sel: SelectorExpr; range: number }[] {
  switch (e.kind) {
    case 'selector':
      return [{ sel: e, range: LOOKBACK_MS }];
    case 'range':
      return [{ sel: e.selector, range: e.range }];
    case 'aggregate':
      return selectorsOf(e.inner);
    case 'number':
      return [];
  }
}

/**
 * Evaluates a parsed expression at every step over fetched raw data, with Prometheus 2.x's
 * semantics: an instant selector takes the latest sample in [t - 5m, t]; a range function reads
 * the samples in [t - range, t]; rate and increase extrapolate as Prometheus' extrapolatedRate
 * does (counter resets included); results of functions (last_over_time aside) and aggregations drop `__name__`.
 */
export function evaluate(e: Expr, times: readonly number[], data: ReadonlyMap<SelectorExpr, readonly RawSeries[]>): StepSeries[] {
  switch (e.kind) {
    case 'number':
      return [{ labels: nameMap(), values: times.map(() => e.value) }];
    case 'selector':
      return (data.get(e) ?? []).map((s) => ({ labels: s.labels, values: instant(s, times, e.offset) }));
    case 'range':
      // last_over_time returns samples as they were, so it keeps the metric name (as Prometheus does).
      return (data.get(e.selector) ?? []).map((s) => ({ labels: e.fn === 'last_over_time' ? s.labels : withoutName(s.labels), values: overRange(s, times, e) }));
    case 'aggregate': {
      const inner = evaluate(e.inner, times, data);
      const groups = new Map<string, { labels: Record<string, string>; members: StepSeries[] }>();
      for (const s of inner) {
        const labels = groupLabels(s.labels, e.grouping);
        const key = JSON.stringify(Object.entries(labels).sort());
        let g = groups.get(key);
        if (!g) groups.set(key, (g = { labels, members: [] }));
        g.members.push(s);
      }
      return [...groups.values()].map((g) => ({ labels: g.labels, values: times.map((_, i) => combine(e.op, g.members, i)) }));
    }
  }
}

function withoutName(labels: Record<string, string>): Record<string, string> {
  const out = nameMap<string>();
  for (const [k, v] of Object.entries(labels)) if (k !== '__name__') out[k] = v;
  return out;
}

function groupLabels(labels: Record<string, string>, grouping: { mode: 'by' | 'without'; labels: string[] } | null): Record<string, string> {
  const out = nameMap<string>();
  if (!grouping) return out;
  for (const [k, v] of Object.entries(labels)) {
    if (k === '__name__') continue;
    if (grouping.labels.includes(k) === (grouping.mode === 'by')) out[k] = v;
  }
  return out;
}

function combine(op: 'sum' | 'avg' | 'min' | 'max' | 'count', members: readonly StepSeries[], i: number): number | undefined {
  let n = 0;
  let acc = 0;
  for (const m of members) {
    const v = m.values[i];
    if (v === undefined) continue;
    if (n === 0) acc = op === 'count' ? 1 : v;
    else if (op === 'sum' || op === 'avg') acc += v;
    else if (op === 'count') acc += 1;
    // Prometheus: NaN loses to any number in min and max.
    else if (op === 'min') acc = v < acc || Number.isNaN(acc) ? v : acc;
    else acc = v > acc || Number.isNaN(acc) ? v : acc;
    n++;
  }
  if (n === 0) return undefined;
  return op === 'avg' ? acc / n : acc;
}

/** The latest sample in [t - lookback, t] at every step (steps ascending: one forward pass). */
function instant(s: RawSeries, times: readonly number[], offset: number): (number | undefined)[] {
  const out: (number | undefined)[] = [];
  let j = -1;
  for (const time of times) {
    const t = time - offset;
    while (j + 1 < s.ts.length && s.ts[j + 1]! <= t) j++;
    out.push(j >= 0 && s.ts[j]! >= t - LOOKBACK_MS ? s.values[j] : undefined);
  }
  return out;
}

function overRange(s: RawSeries, times: readonly number[], e: RangeExpr): (number | undefined)[] {
  const out: (number | undefined)[] = [];
  let lo = 0;
  let hi = 0;
  const { ts, values } = s;
  for (const time of times) {
    const end = time - e.selector.offset;
    const start = end - e.range;
    while (lo < ts.length && ts[lo]! < start) lo++;
    if (hi < lo) hi = lo;
    while (hi < ts.length && ts[hi]! <= end) hi++;
    out.push(lo < hi ? rangeValue(e.fn, ts, values, lo, hi, start, end, e.range) : undefined);
  }
  return out;
}

function rangeValue(fn: RangeExpr['fn'], ts: readonly number[], values: readonly number[], lo: number, hi: number, start: number, end: number, range: number): number | undefined {
  const n = hi - lo;
  switch (fn) {
    case 'count_over_time':
      return n;
    case 'last_over_time':
      return values[hi - 1];
    case 'sum_over_time':
    case 'avg_over_time': {
      let sum = 0;
      for (let k = lo; k < hi; k++) sum += values[k]!;
      return fn === 'sum_over_time' ? sum : sum / n;
    }
    case 'min_over_time':
    case 'max_over_time': {
      let acc = values[lo]!;
      for (let k = lo + 1; k < hi; k++) {
        const v = values[k]!;
        if (fn === 'min_over_time' ? v < acc || Number.isNaN(acc) : v > acc || Number.isNaN(acc)) acc = v;
      }
      return acc;
    }
    case 'rate':
    case 'increase':
      return extrapolatedRate(ts, values, lo, hi, start, end, range, fn === 'rate');
  }
}

/** Prometheus' extrapolatedRate (promql/functions.go) for counters, in its 2.x form. */
function extrapolatedRate(ts: readonly number[], values: readonly number[], lo: number, hi: number, rangeStart: number, rangeEnd: number, range: number, isRate: boolean): number | undefined {
  if (hi - lo < 2) return undefined;
  const first = values[lo]!;
  const last = values[hi - 1]!;
  let result = last - first;
  let prev = first;
  for (let k = lo + 1; k < hi; k++) {
    const v = values[k]!;
    if (v < prev) result += prev;
    prev = v;
  }
  const firstT = ts[lo]!;
  const lastT = ts[hi - 1]!;
  let durationToStart = (firstT - rangeStart) / 1000;
  const durationToEnd = (rangeEnd - lastT) / 1000;
  const sampledInterval = (lastT - firstT) / 1000;
  const averageBetween = sampledInterval / (hi - lo - 1);
  if (result > 0 && first >= 0) {
    const durationToZero = sampledInterval * (first / result);
    if (durationToZero < durationToStart) durationToStart = durationToZero;
  }
  const threshold = averageBetween * 1.1;
  let extrapolateTo = sampledInterval;
  extrapolateTo += durationToStart < threshold ? durationToStart : averageBetween / 2;
  extrapolateTo += durationToEnd < threshold ? durationToEnd : averageBetween / 2;
  result *= extrapolateTo / sampledInterval;
  if (isRate) result /= range / 1000;
  return result;
}
