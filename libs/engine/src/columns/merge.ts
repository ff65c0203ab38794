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

/**
 * Merge sources (ascending precedence) into sorted, de-duplicated columns. Sources that follow
 * one another in time (the row groups of a block, a window's parts flushed in order) are
 * concatenated; others are merged as sorted runs, two at a time, without a comparison sort of
 * every sample (a latest query merged a block's six row groups per series that way: most of
 * its time).
 */
export function mergeSources(sources: readonly Source[]): SeriesColumns {
  if (sources.length === 1 && sources[0]!.sortedUnique) return sources[0]!.data;
  const names = new Set<string>();
  for (const s of sources) for (const f of Object.keys(s.data.fields)) names.add(f);
  if (inSequence(sources)) return gather(sources, names, null);
  let runs = sources.map((s, si) => runOf(s, si));
  // Adjacent runs merged pairwise keep the precedence order: the left run is always the older.
  while (runs.length > 1) {
    const next: Run[] = [];
    for (let k = 0; k < runs.length; k += 2) next.push(k + 1 < runs.length ? mergeRuns(runs[k]!, runs[k + 1]!) : runs[k]!);
    runs = next;
  }
  return gather(sources, names, runs[0] ?? null);
}

/** Rows of the merge: timestamp, source and row of each, ascending by time, one per timestamp. */
interface Run {
  ts: Float64Array;
  src: Int32Array;
  row: Int32Array;
}

/** Whether every source is sorted and unique and starts after the one before it ends (empty ones aside). */
function inSequence(sources: readonly Source[]): boolean {
  let last = Number.NEGATIVE_INFINITY;
  for (const s of sources) {
    if (!s.sortedUnique) return false;
    const ts = s.data.ts;
    if (ts.length === 0) continue;
    if (!(ts[0]! > last)) return false;
    last = ts[ts.length - 1]!;
  }
  return true;
}

/** One source as a run: its rows as they are when sorted and unique, else in time order keeping the last of equal timestamps. */
function runOf(source: Source, si: number): Run {
  const ts = source.data.ts;
  const n = ts.length;
  let order: number[] | null = null;
  if (!source.sortedUnique) {
    let sorted = true;
    for (let i = 1; i < n && sorted; i++) sorted = ts[i]! >= ts[i - 1]!;
    const idx = Array.from({ length: n }, (_, i) => i);
    order = sorted ? idx : idx.sort((a, b) => ts[a]! - ts[b]! || a - b);
  }
  const run: Run = { ts: new Float64Array(n), src: new Int32Array(n).fill(si), row: new Int32Array(n) };
  let m = 0;
  for (let k = 0; k < n; k++) {
    const i = order === null ? k : order[k]!;
    // Within a source a later sample wins: a row replaces the one before it at the same time.
    if (m > 0 && order !== null && run.ts[m - 1] === ts[i]) m--;
    run.ts[m] = ts[i]!;
    run.row[m] = i;
    m++;
  }
  return m === n ? run : { ts: run.ts.subarray(0, m), src: run.src.subarray(0, m), row: run.row.subarray(0, m) };
}

/** Two runs as one; at equal timestamps the newer run (`b`) wins. */
function mergeRuns(a: Run, b: Run): Run {
  const na = a.ts.length;
  const nb = b.ts.length;
  const out: Run = { ts: new Float64Array(na + nb), src: new Int32Array(na + nb), row: new Int32Array(na + nb) };
  let i = 0;
  let j = 0;
  let m = 0;
  while (i < na || j < nb) {
    const ta = i < na ? a.ts[i]! : Number.POSITIVE_INFINITY;
    const tb = j < nb ? b.ts[j]! : Number.POSITIVE_INFINITY;
    if (ta < tb) {
      out.ts[m] = ta;
      out.src[m] = a.src[i]!;
      out.row[m] = a.row[i]!;
      i++;
    } else {
      if (ta === tb) i++;
      out.ts[m] = tb;
      out.src[m] = b.src[j]!;
      out.row[m] = b.row[j]!;
      j++;
    }
    m++;
  }
  return m === na + nb ? out : { ts: out.ts.subarray(0, m), src: out.src.subarray(0, m), row: out.row.subarray(0, m) };
}

/** The output columns: the rows of `run`, or every row of every source in order when there is no run. */
function gather(sources: readonly Source[], names: ReadonlySet<string>, run: Run | null): SeriesColumns {
  let total = 0;
  if (run) total = run.ts.length;
  else for (const s of sources) total += s.data.ts.length;
  const out: SeriesColumns = { ts: new Array<number>(total), fields: nameMap() };
  // Columns looked up by name once, not per sample (a fold merges a series from every part).
  const outColumns: FieldValue[][] = [];
  for (const f of names) outColumns.push((out.fields[f] = new Array<FieldValue>(total)));
  const sourceColumns = sources.map((s) => [...names].map((f) => own(s.data.fields, f)));
  if (run) {
    for (let k = 0; k < total; k++) {
      const i = run.row[k]!;
      const columns = sourceColumns[run.src[k]!]!;
      out.ts[k] = run.ts[k]!;
      for (let c = 0; c < outColumns.length; c++) outColumns[c]![k] = columns[c]?.[i] ?? null;
    }
    return out;
  }
  let at = 0;
  sources.forEach((s, si) => {
    const ts = s.data.ts;
    const n = ts.length;
    for (let i = 0; i < n; i++) out.ts[at + i] = ts[i]!;
    const columns = sourceColumns[si]!;
    for (let c = 0; c < outColumns.length; c++) {
      const col = columns[c];
      const dst = outColumns[c]!;
      if (col) for (let i = 0; i < n; i++) dst[at + i] = col[i] ?? null;
      else for (let i = 0; i < n; i++) dst[at + i] = null;
    }
    at += n;
  });
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

