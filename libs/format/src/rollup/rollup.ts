import { CorruptDataError, nameMap, type FieldValue } from '@s4/core';

/**
 * What a rollup object stores (rollup.md): a segment object whose footer entries are
 * `<series id>.<resolution>` and whose blocks hold one row per bucket. This module is the
 * mapping between buckets and those columns; the container is segment.ts.
 */

/**
 * Aggregates of one field over one time bucket. Buckets over disjoint samples combine exactly
 * (sums add, min/max fold, first/last by timestamp).
 */
export interface Bucket {
  start: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  first: number;
  firstTs: number;
  last: number;
  lastTs: number;
}

/** Rollup column version 2: first/last sample times as offsets from the bucket start. */
export const ROLLUP_COLUMNS = ['count', 'sum', 'min', 'max', 'first', 'firstAt', 'last', 'lastAt'] as const;
/** Rollup column version 1 (written before 2026-11-23): absolute times; still read. */
export const ROLLUP_COLUMNS_V1 = ['count', 'sum', 'min', 'max', 'first', 'firstTs', 'last', 'lastTs'] as const;

/**
 * The entry of a series that has numbers in the object but no resolution worth storing: readers
 * answer it from raw data (`<series id>.raw`, a block without rows).
 */
export const RAW_MARKER = 'raw';

/** Footer entry ids of a rollup object: `<series id>.<resolution>` (or `.raw`). */
export function rollupSeriesId(id: string, resolution: string): string {
  return `${id}.${resolution}`;
}

/** Inverse of rollupSeriesId: the raw series id and the resolution (or the raw marker). */
export function parseRollupSeriesId(entryId: string): { id: string; resolution: string } {
  const dot = entryId.lastIndexOf('.');
  return { id: entryId.slice(0, dot), resolution: entryId.slice(dot + 1) };
}

const NAME_RE = /^([1-9]\d{0,5})([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The width of a resolution name (`5m` → 300,000), or null for the raw marker and unknown names. */
export function resolutionMs(name: string): number | null {
  const m = NAME_RE.exec(name);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : null;
}

/** Buckets of several fields as one block's columns (version 2): ts = bucket starts, `<field>.<column>`. */
export function bucketsToColumns(byField: ReadonlyMap<string, readonly Bucket[]>): { ts: number[]; fields: Record<string, FieldValue[]> } {
  const starts = [...new Set([...byField.values()].flatMap((l) => l.map((b) => b.start)))].sort((a, b) => a - b);
  const index = new Map(starts.map((s, i) => [s, i]));
  const fields = nameMap<FieldValue[]>();
  for (const [field, list] of byField) {
    const cols = ROLLUP_COLUMNS.map((c) => {
      const col = new Array<FieldValue>(starts.length).fill(null);
      fields[`${field}.${c}`] = col;
      return col;
    });
    for (const b of list) {
      const i = index.get(b.start)!;
      const row = [b.count, b.sum, b.min, b.max, b.first, b.firstTs - b.start, b.last, b.lastTs - b.start];
      row.forEach((v, k) => (cols[k]![i] = v));
    }
  }
  return { ts: starts, fields };
}

/** The buckets of each field of a rollup block, either column version. */
export function columnsToBuckets(ts: readonly number[], fields: Readonly<Record<string, readonly FieldValue[]>>): Map<string, Bucket[]> {
  const out = new Map<string, Bucket[]>();
  const names = new Set(Object.keys(fields).filter((k) => k.endsWith('.count')).map((k) => k.slice(0, -'.count'.length)));
  for (const field of names) {
    const v2 = Object.hasOwn(fields, `${field}.firstAt`);
    const cols = (v2 ? ROLLUP_COLUMNS : ROLLUP_COLUMNS_V1).map((c) => (Object.hasOwn(fields, `${field}.${c}`) ? fields[`${field}.${c}`]! : null));
    const [count, sum, min, max, first, firstAt, last, lastAt] = cols;
    if (!count || !sum || !min || !max || !first || !firstAt || !last || !lastAt) throw new CorruptDataError('rollup block', `field ${field} lacks a bucket column`);
    const list: Bucket[] = [];
    for (let i = 0; i < ts.length; i++) {
      if (count[i] === null) continue;
      const start = ts[i]!;
      const base = v2 ? start : 0;
      list.push({
        start,
        count: num(count[i]),
        sum: num(sum[i]),
        min: num(min[i]),
        max: num(max[i]),
        first: num(first[i]),
        firstTs: base + num(firstAt[i]),
        last: num(last[i]),
        lastTs: base + num(lastAt[i]),
      });
    }
    out.set(field, list);
  }
  return out;
}

function num(v: FieldValue | undefined): number {
  if (typeof v !== 'number') throw new CorruptDataError('rollup block', `a bucket holds ${JSON.stringify(v)} where a number belongs`);
  return v;
}
