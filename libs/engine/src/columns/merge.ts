import { nameMap, own, type FieldValue, type SeriesColumns } from '@s4/core';
import type { BlockColumns } from '@s4/format';

/**
 * Samples of one series from one source, as columns: segment blocks are sorted and unique, hot
 * logs are in arrival order. Sources are merged in the order given: a later source wins over an
 * earlier one at the same timestamp, and within a source a later sample wins.
 */
export interface Source {
  readonly data: SeriesColumns;
  readonly sortedUnique: boolean;
  /** A segment block's decoded columns, when the source is one: readers can stream from them without building `data`. */
  readonly columns?: BlockColumns;
}

/** Merge sources (ascending precedence) into sorted, de-duplicated columns. */
export function mergeSources(sources: readonly Source[]): SeriesColumns {
  if (sources.length === 1 && sources[0]!.sortedUnique) return sources[0]!.data;
  const ts: number[] = [];
  const rank: number[] = [];
  // Source and row of each entry, as two columns rather than a pair per sample.
  const sourceOf: number[] = [];
  const rowOf: number[] = [];
  sources.forEach((s, si) => {
    const n = s.data.ts.length;
    const times = s.data.ts;
    for (let i = 0; i < n; i++) {
      ts.push(times[i]!);
      rank.push(rank.length);
      sourceOf.push(si);
      rowOf.push(i);
    }
  });
  // Stable order by (ts, arrival): the last entry of each run of equal timestamps wins.
  const order = rank.sort((a, b) => ts[a]! - ts[b]! || a - b);
  const names = new Set<string>();
  for (const s of sources) for (const f of Object.keys(s.data.fields)) names.add(f);
  const out: SeriesColumns = { ts: [], fields: nameMap() };
  // Columns looked up by name once, not per sample (a fold merges a series from every part).
  const outColumns: FieldValue[][] = [];
  for (const f of names) outColumns.push((out.fields[f] = []));
  const sourceColumns = sources.map((s) => [...names].map((f) => own(s.data.fields, f)));
  for (let k = 0; k < order.length; k++) {
    const idx = order[k]!;
    const next = order[k + 1];
    if (next !== undefined && ts[next] === ts[idx]) continue;
    const i = rowOf[idx]!;
    const columns = sourceColumns[sourceOf[idx]!]!;
    out.ts.push(ts[idx]!);
    for (let c = 0; c < outColumns.length; c++) outColumns[c]!.push(columns[c]?.[i] ?? null);
  }
  return out;
}

/**
 * Whether one source's columns are already what mergeSources makes of them: timestamps strictly
 * ascending, every column as long, no undefined value. A hot log usually is (samples arrive in
 * time order), and the sort and copy cost a flush of many small series more than decoding them.
 */
export function isSortedUnique(data: SeriesColumns): boolean {
  const ts = data.ts;
  const n = ts.length;
  for (let i = 1; i < n; i++) if (!(ts[i]! > ts[i - 1]!)) return false;
  for (const f in data.fields) {
    const col = data.fields[f]!;
    if (col.length !== n) return false;
    for (let i = 0; i < n; i++) if (col[i] === undefined) return false;
  }
  return true;
}

/** Keep [from, to) and the requested fields (all when `fields` is undefined); drop all-null columns. */
export function clip(data: SeriesColumns, from: number, to: number, fields?: readonly string[]): SeriesColumns {
  const lo = lowerBound(data.ts, from);
  const hi = lowerBound(data.ts, to);
  const names = fields ?? Object.keys(data.fields);
  const out: SeriesColumns = { ts: lo === 0 && hi === data.ts.length ? data.ts : data.ts.slice(lo, hi), fields: nameMap() };
  for (const f of names) {
    const col = own(data.fields, f);
    if (col) out.fields[f] = lo === 0 && hi === data.ts.length ? col : col.slice(lo, hi);
    else if (fields) out.fields[f] = new Array<FieldValue>(hi - lo).fill(null);
  }
  if (!fields) for (const [f, col] of Object.entries(out.fields)) if (col.every((v) => v === null)) delete out.fields[f];
  return out;
}

export function lowerBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Concatenate per-window columns (windows ascending and disjoint) into one series. */
export function concatWindows(parts: readonly SeriesColumns[]): SeriesColumns {
  if (parts.length === 1) return parts[0]!;
  const names = new Set<string>();
  for (const p of parts) for (const f of Object.keys(p.fields)) names.add(f);
  let total = 0;
  for (const p of parts) total += p.ts.length;
  const out: SeriesColumns = { ts: new Array<number>(total), fields: nameMap() };
  for (const f of names) out.fields[f] = new Array<FieldValue>(total);
  let at = 0;
  for (const p of parts) {
    const n = p.ts.length;
    for (let i = 0; i < n; i++) out.ts[at + i] = p.ts[i]!;
    for (const f of names) {
      const col = own(p.fields, f);
      const dst = out.fields[f]!;
      if (col) for (let i = 0; i < n; i++) dst[at + i] = col[i]!;
      else for (let i = 0; i < n; i++) dst[at + i] = null;
    }
    at += n;
  }
  return out;
}

