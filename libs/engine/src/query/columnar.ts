import { nameMap, type FieldValue, type SeriesColumns, type SeriesKey, type Tags } from '@s4/core';
import { assemble, selectPaths, sliceColumns, type BlockColumns } from '@s4/format';
import { concatWindows, lowerBound, type Source } from '../columns/merge.js';
import type { ColumnSlice, SeriesResult } from './types.js';

/**
 * A series answered straight from decoded block columns: the samples are `slices` (runs of
 * blocks, in time order) and `names` the fields of the answer, in the order the merging path
 * would give them. Writers stream from the slices; `ts` and `fields` are built only when
 * something asks for them (aggregation, latest, maxPoints never get here).
 */
export class ColumnarSeries implements SeriesResult {
  readonly metric: string;
  readonly tags: Tags;
  declare readonly slices: readonly ColumnSlice[];
  declare readonly names: readonly string[];
  declare readonly ts: number[];
  declare readonly fields: Record<string, FieldValue[]>;
  #built: SeriesColumns | undefined;

  constructor(
    readonly id: string,
    key: SeriesKey,
    slices: readonly ColumnSlice[],
    names: readonly string[],
  ) {
    this.metric = key.metric;
    this.tags = key.tags;
    // Seen from outside it is a plain result ({id, metric, tags, ts, fields}: equality, spreading
    // and JSON agree with the merging path's); the slices are for writers that know of them.
    Object.defineProperty(this, 'slices', { value: slices, enumerable: false });
    Object.defineProperty(this, 'names', { value: names, enumerable: false });
    Object.defineProperty(this, 'ts', { get: () => this.#values().ts, enumerable: true });
    Object.defineProperty(this, 'fields', { get: () => this.#values().fields, enumerable: true });
  }

  #values(): SeriesColumns {
    if (this.#built) return this.#built;
    const parts = this.slices.map((s) => assemble(sliceColumns(s.columns, s.lo, s.hi)));
    const all = concatWindows(parts);
    const fields = nameMap<FieldValue[]>();
    for (const name of this.names) fields[name] = Object.hasOwn(all.fields, name) ? all.fields[name]! : new Array<FieldValue>(all.ts.length).fill(null);
    return (this.#built = { ts: all.ts, fields });
  }
}

/**
 * The columnar answer of one series over [from, to), or null when its sources need a merge:
 * every source must be a segment block (no hot data) and no two blocks may share a timestamp
 * range (then no sample is overwritten by another and time order is block order). Field order
 * and the dropping of all-null fields are those of mergeWindows + clip.
 */
export function columnarSeries(id: string, key: SeriesKey, windows: ReadonlyMap<number, readonly Source[]>, from: number, to: number, fields: readonly string[] | undefined): ColumnarSeries | null {
  const blocks: BlockColumns[] = [];
  const union: string[] = [];
  const seen = new Set<string>();
  for (const w of [...windows.keys()].sort((a, b) => a - b))
    for (const s of windows.get(w)!) {
      if (!s.columns || !s.sortedUnique) return null;
      blocks.push(s.columns);
      for (const name of s.columns.fields.keys())
        if (!seen.has(name)) {
          seen.add(name);
          union.push(name);
        }
    }
  const ordered = blocks.filter((b) => b.ts.length > 0).sort((a, b) => a.ts[0]! - b.ts[0]!);
  for (let i = 1; i < ordered.length; i++) if (ordered[i - 1]!.ts[ordered[i - 1]!.ts.length - 1]! >= ordered[i]!.ts[0]!) return null;
  const slices: ColumnSlice[] = [];
  for (const columns of ordered) {
    const lo = lowerBound(columns.ts, from);
    const hi = lowerBound(columns.ts, to);
    if (hi > lo) slices.push({ columns, lo, hi });
  }
  if (slices.length === 0) return new ColumnarSeries(id, key, [], []);
  const names = fields ? [...selectPaths(fields, new Set(union)).keys()] : union.filter((name) => slices.some((s) => hasValue(s, name)));
  return new ColumnarSeries(id, key, slices, objectKeyOrder(names));
}

/**
 * Names in the order an object keyed by them lists them (integer-like names first, ascending):
 * the order the merging path's field maps give, so both answers are the same bytes.
 */
function objectKeyOrder(names: readonly string[]): string[] {
  const o = nameMap<true>();
  for (const n of names) o[n] = true;
  return Object.keys(o);
}

/** Whether some sample of the slice holds a non-null value of the (unprojected) field. */
function hasValue(s: ColumnSlice, name: string): boolean {
  const f = s.columns.fields.get(name);
  if (!f) return false;
  if (f.kind === 'values') {
    for (let i = s.lo; i < s.hi; i++) if (f.values[i] !== null) return true;
    return false;
  }
  const root = f.root;
  // Kind 0 is null: a sample holding null (absent samples are stored as null too).
  if (!root.kinds) return root.kind !== 0 && root.kind !== -1;
  for (let i = s.lo; i < s.hi; i++) if (root.kinds[i] !== 0) return true;
  return false;
}
