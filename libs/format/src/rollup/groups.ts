import { CorruptDataError, canonicalSeries, nameMap, seriesId, type FieldValue, type SeriesColumns, type SeriesKey } from '@s4/core';
import { decodeSegment, encodeSegment, type SegmentFooter, type SegmentSeriesInput } from '../segment/index.js';
import { RAW_MARKER, columnsToBuckets, parseRollupSeriesId, resolutionMs, type Bucket } from './rollup.js';

/**
 * Rollup column version 3 (rollup.md): the series of a metric share blocks. One *keys* entry per
 * metric lists its series (tags, stored resolutions); *bucket group* entries hold the buckets of
 * consecutive series of that list at one resolution, one row per (series, bucket). Per-series
 * footer entries and blocks cost more than the buckets of a series scraped every 10 s, and
 * columns across series compress (equal counts and offsets, neighbouring values).
 */

/** A group block holds the buckets of consecutive series until it reaches this many rows. */
export const ROLLUP_GROUP_ROWS = 4096;

/** Per resolution stored (name → per field, its buckets ascending); none: the series is read raw. */
export type ResolutionBuckets = ReadonlyMap<string, ReadonlyMap<string, readonly Bucket[]>>;

/** One series of a rollup object, whatever the column version. */
export interface RollupSeries extends SeriesKey {
  readonly byRes: ResolutionBuckets;
}

/** A series as decodeRollupObject returns it. */
export interface DecodedRollupSeries extends SeriesKey {
  byRes: Map<string, Map<string, Bucket[]>>;
}

export interface RollupObjectInput {
  ns: string;
  shard: number;
  /** Hour window start, or day start for a day object. */
  window: number;
  series: readonly RollupSeries[];
}

const ID_RE = /^@(\d{8})(?:\/([1-9]\d{0,5}[smhd])\/(\d{8}))?$/;
const pad = (n: number) => String(n).padStart(8, '0');
const TAG = 'tag.';
const RES = 'res';
const SERIES = 'series';
const BUCKET = 'bucket';
const AGGS = ['count', 'sum', 'min', 'max', 'first', 'firstAt', 'last', 'lastAt'] as const;

/** A version 3 footer entry: the keys of metric `m` (`resolution` null) or a bucket group from series `first`. */
export interface GroupEntryId {
  metric: number;
  resolution: string | null;
  first: number;
}

/** Parses a version 3 entry id (`@<m:8>` or `@<m:8>/<resolution>/<first:8>`); null for version 1 and 2 ids. */
export function parseGroupEntryId(id: string): GroupEntryId | null {
  const m = ID_RE.exec(id);
  if (!m) return null;
  return { metric: Number(m[1]), resolution: m[2] ?? null, first: m[3] === undefined ? 0 : Number(m[3]) };
}

/** Whether a rollup object's footer uses column version 3 (its entries are keys and groups, not series). */
export function isGroupedRollup(footer: Pick<SegmentFooter, 'series'>): boolean {
  const first = footer.series[0];
  return first !== undefined && first.id.startsWith('@');
}

/** Bucket index of a start within a resolution, counted from the resolution's bucket holding `window`. */
const baseOf = (window: number, ms: number) => Math.floor(window / ms);

/** The footer entries of a version 3 rollup object (encodeSegment writes them in id order). */
export function rollupGroupEntries(window: number, series: readonly RollupSeries[]): SegmentSeriesInput[] {
  const byMetric = new Map<string, RollupSeries[]>();
  for (const s of series) {
    let l = byMetric.get(s.metric);
    if (!l) byMetric.set(s.metric, (l = []));
    l.push(s);
  }
  const out: SegmentSeriesInput[] = [];
  [...byMetric.keys()].sort().forEach((metric, m) => {
    const list = byMetric.get(metric)!.map((s) => ({ s, c: canonicalSeries(s) })).sort((a, b) => (a.c < b.c ? -1 : a.c > b.c ? 1 : 0)).map((x) => x.s);
    for (let i = 1; i < list.length; i++) if (canonicalSeries(list[i]!) === canonicalSeries(list[i - 1]!)) throw new RangeError(`series ${canonicalSeries(list[i]!)} appears twice in one rollup object`);
    const resolutions = new Map<string, number>();
    for (const s of list)
      for (const r of s.byRes.keys()) {
        const ms = resolutionMs(r);
        if (ms === null) throw new RangeError(`${r} is not a resolution`);
        resolutions.set(r, ms);
      }
    // Keys: one row per series; a tag column per tag key (null where a series lacks it).
    const tagKeys = [...new Set(list.flatMap((s) => Object.keys(s.tags)))].sort();
    const keyFields = nameMap<FieldValue[]>();
    keyFields[RES] = list.map((s) => [...s.byRes.keys()].sort((a, b) => resolutions.get(a)! - resolutions.get(b)!).join(','));
    for (const k of tagKeys) keyFields[TAG + k] = list.map((s) => (Object.hasOwn(s.tags, k) ? s.tags[k]! : null));
    out.push({ id: `@${pad(m)}`, metric, tags: {}, ts: list.map((_, i) => i), fields: keyFields });
    for (const [res, ms] of [...resolutions].sort((a, b) => a[1] - b[1])) {
      const base = baseOf(window, ms);
      let group: { first: number; rows: Row[] } | null = null;
      const flush = () => {
        if (group && group.rows.length > 0) out.push({ id: `@${pad(m)}/${res}/${pad(group.first)}`, metric, tags: {}, ...rowsToColumns(group.rows, base, ms) });
        group = null;
      };
      list.forEach((s, ordinal) => {
        const byField = s.byRes.get(res);
        if (!byField) return;
        group ??= { first: ordinal, rows: [] };
        group.rows.push(...seriesRows(ordinal, byField));
        if (group.rows.length >= ROLLUP_GROUP_ROWS) flush();
      });
      flush();
    }
  });
  return out;
}

interface Row {
  series: number;
  start: number;
  byField: Map<string, Bucket>;
}

/** One row per bucket start of the series, each with the buckets of the fields that have one. */
function seriesRows(series: number, byField: ReadonlyMap<string, readonly Bucket[]>): Row[] {
  const rows = new Map<number, Row>();
  for (const [field, list] of byField)
    for (const b of list) {
      let r = rows.get(b.start);
      if (!r) rows.set(b.start, (r = { series, start: b.start, byField: new Map() }));
      r.byField.set(field, b);
    }
  return [...rows.values()].sort((a, b) => a.start - b.start);
}

function rowsToColumns(rows: readonly Row[], base: number, ms: number): SeriesColumns {
  const fields = nameMap<FieldValue[]>();
  fields[SERIES] = rows.map((r) => r.series);
  fields[BUCKET] = rows.map((r) => {
    if (r.start % ms !== 0) throw new RangeError(`bucket start ${r.start} is not a multiple of ${ms} ms`);
    return r.start / ms - base;
  });
  const names = [...new Set(rows.flatMap((r) => [...r.byField.keys()]))].sort();
  for (const f of names) {
    const cols = AGGS.map((a) => (fields[`${f}.${a}`] = new Array<FieldValue>(rows.length).fill(null)));
    rows.forEach((r, i) => {
      const b = r.byField.get(f);
      if (!b) return;
      const v = [b.count, b.sum, b.min, b.max, b.first, b.firstTs - b.start, b.last, b.lastTs - b.start];
      for (let k = 0; k < AGGS.length; k++) cols[k]![i] = v[k]!;
    });
    const split = splitSums(cols[1]!);
    if (split) {
      delete fields[`${f}.sum`];
      fields[`${f}.${SUM_SCALE}`] = split.scale;
      fields[`${f}.${SUM_UNITS}`] = split.units;
      fields[`${f}.${SUM_ULPS}`] = split.ulps;
    }
    const values = splitValues(fields[SERIES], cols[2]!, cols[3]!, cols[4]!, cols[6]!);
    if (values) {
      for (const a of ['min', 'max', 'first', 'last']) delete fields[`${f}.${a}`];
      for (const [name, col] of Object.entries(values)) fields[`${f}.${name}`] = col;
    }
  }
  return { ts: rows.map((_, i) => i), fields };
}

/** Columns of a field's values split at a decimal scale (rollup.md, "Values"). */
type SplitValues = Record<'valueScale' | 'lastUnits' | 'firstStep' | 'maxAbove' | 'minBelow', FieldValue[]>;

/**
 * Min, max, first and last of decimal data as integers of 10^-k units, each against what it is
 * closest to: first against the previous bucket's last (the next sample of a series), max above
 * and min below the larger and smaller of first and last. A column against its own previous
 * row, as the decimal codec stores it, spans a whole bucket of a random walk; these span about
 * one sample (1 Hz sensors: the four columns 139 -> 114 KB of a day). Null when some value is
 * not exactly a decimal of scale ≤ 12 (−0, NaN, infinities, binary fractions).
 */
function splitValues(series: readonly FieldValue[], min: readonly FieldValue[], max: readonly FieldValue[], first: readonly FieldValue[], last: readonly FieldValue[]): SplitValues | null {
  scales: for (let k = 0; k <= 12; k++) {
    const p = 10 ** k;
    const units = (v: FieldValue): number | null => {
      const m = Math.round((v as number) * p);
      // −0 passes m / p but not the integer arithmetic below, which gives +0 back.
      return Number.isSafeInteger(m) && !Object.is(m, -0) && Object.is(m / p, v) ? m : null;
    };
    const out: SplitValues = { valueScale: [], lastUnits: [], firstStep: [], maxAbove: [], minBelow: [] };
    let prevSeries: FieldValue = null;
    let prevLast = 0;
    for (let i = 0; i < first.length; i++) {
      if (first[i] === null) {
        for (const col of Object.values(out)) col.push(null);
        continue;
      }
      const [lo, hi, f, l] = [units(min[i]!), units(max[i]!), units(first[i]!), units(last[i]!)];
      if (lo === null || hi === null || f === null || l === null) continue scales;
      if (series[i] !== prevSeries) prevLast = 0;
      const row = [k, l, f - prevLast, hi - Math.max(f, l), Math.min(f, l) - lo];
      if (!row.every(Number.isSafeInteger)) continue scales;
      out.valueScale.push(k);
      out.lastUnits.push(row[1]!);
      out.firstStep.push(row[2]!);
      out.maxAbove.push(row[3]!);
      out.minBelow.push(row[4]!);
      prevSeries = series[i]!;
      prevLast = l;
    }
    return out;
  }
  return null;
}

/** Min, max, first and last of a field: stored whole, or rebuilt from their split columns. */
function valueColumns(fields: Readonly<Record<string, readonly FieldValue[]>>, series: readonly FieldValue[], f: string, what: string, only?: Ordinals): (readonly FieldValue[] | undefined)[] {
  const whole = ['min', 'max', 'first', 'last'].map((a) => own(fields, `${f}.${a}`));
  if (whole.every((c) => c)) return whole;
  const cols = ['valueScale', 'lastUnits', 'firstStep', 'maxAbove', 'minBelow'].map((a) => own(fields, `${f}.${a}`));
  if (cols.some((c) => !c)) return [undefined, undefined, undefined, undefined];
  const [scale, lastUnits, firstStep, maxAbove, minBelow] = cols as (readonly FieldValue[])[];
  const out = [0, 1, 2, 3].map(() => new Array<FieldValue>(series.length).fill(null));
  let prevSeries: FieldValue = null;
  let prevLast = 0;
  for (let i = 0; i < series.length; i++) {
    const k = scale![i];
    if (k === null || k === undefined) continue;
    // Left null: a series' rows are consecutive, so the next wanted row starts a run of its own.
    if (only && !only.has(series[i] as number)) continue;
    const row = [lastUnits![i], firstStep![i], maxAbove![i], minBelow![i]];
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k > 22 || !row.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) {
      throw new CorruptDataError(what, `field ${f}: bucket ${i} has no valid split values`);
    }
    const [l, step, above, below] = row as number[];
    if (series[i] !== prevSeries) prevLast = 0;
    const fu = step! + prevLast;
    const p = 10 ** k;
    out[0]![i] = (Math.min(fu, l!) - below!) / p;
    out[1]![i] = (Math.max(fu, l!) + above!) / p;
    out[2]![i] = fu / p;
    out[3]![i] = l! / p;
    prevSeries = series[i]!;
    prevLast = l!;
  }
  return out;
}

const SUM_SCALE = 'sumScale';
const SUM_UNITS = 'sumUnits';
const SUM_ULPS = 'sumUlps';
/** A split sum is used only where every bucket's rounding error is at most this many ulps. */
const MAX_SUM_ULPS = 1 << 16;
const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);
const bitsOf = (x: number): bigint => ((f64[0] = x), i64[0]!);
const fromBits = (b: bigint): number => ((i64[0] = b), f64[0]!);

/**
 * Sums of decimal values (two-decimal gauges) carry float rounding noise, so the decimal codec
 * cannot store them and they cost about seven bytes each: half of a 1-minute rollup of 1 Hz
 * data. Split, each is an integer of `10^-scale` units, small between neighbouring buckets, and
 * the few ulps between that decimal and the sum itself (rollup.md, "Sums"). Null when some sum
 * does not fit (NaN, infinities, values far from any decimal of scale ≤ 12).
 */
function splitSums(sums: readonly FieldValue[]): { scale: FieldValue[]; units: FieldValue[]; ulps: FieldValue[] } | null {
  scales: for (let k = 0; k <= 12; k++) {
    const p = 10 ** k;
    const units: FieldValue[] = [];
    const ulps: FieldValue[] = [];
    for (const v of sums) {
      if (v === null) {
        units.push(null);
        ulps.push(null);
        continue;
      }
      const d = Math.round((v as number) * p);
      if (!Number.isSafeInteger(d)) continue scales;
      const n = bitsOf(v as number) - bitsOf(d / p);
      if (n > MAX_SUM_ULPS || n < -MAX_SUM_ULPS) continue scales;
      units.push(d);
      ulps.push(Number(n));
    }
    return { scale: sums.map((v) => (v === null ? null : k)), units, ulps };
  }
  return null;
}

/** The sum column of a field: stored whole, or rebuilt from its split columns. */
function sumColumn(fields: Readonly<Record<string, readonly FieldValue[]>>, series: readonly FieldValue[], f: string, what: string, only?: Ordinals): readonly FieldValue[] | undefined {
  const whole = own(fields, `${f}.sum`);
  if (whole) return whole;
  const scale = own(fields, `${f}.${SUM_SCALE}`);
  const units = own(fields, `${f}.${SUM_UNITS}`);
  const ulps = own(fields, `${f}.${SUM_ULPS}`);
  if (!scale || !units || !ulps) return undefined;
  return scale.map((k, i) => {
    if (k === null || (only && !only.has(series[i] as number))) return null;
    const d = units[i];
    const n = ulps[i];
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k > 22 || typeof d !== 'number' || !Number.isSafeInteger(d) || typeof n !== 'number' || !Number.isSafeInteger(n)) {
      throw new CorruptDataError(what, `field ${f}: bucket ${i} has no valid split sum`);
    }
    return fromBits(bitsOf(d / 10 ** k) + BigInt(n));
  });
}

/** Series ordinals a read wants (a Set, or a Map by ordinal). */
type Ordinals = { has(ordinal: number): boolean };

/** A series of a keys block: its key and the resolutions stored for it (none: read raw). */
export interface GroupedSeries extends SeriesKey {
  resolutions: string[];
}

/** The series a keys block lists, in ordinal order. */
export function keysOfBlock(metric: string, block: SeriesColumns): GroupedSeries[] {
  const keyAt = keyReader(metric, block);
  return block.ts.map((_, i) => keyAt(i));
}

/**
 * The series of a keys block whose tags hold every `equal` pair, by ordinal: the pairs are
 * compared in the tag columns before any key is built (a query for one series of a metric
 * built the keys of all of them, in every object it read).
 */
export function keysOfBlockWith(metric: string, block: SeriesColumns, equal: readonly (readonly [string, string])[]): Map<number, GroupedSeries> {
  const keyAt = keyReader(metric, block);
  const columns = equal.map(([k, v]) => [own(block.fields, `${TAG}${k}`), v] as const);
  const out = new Map<number, GroupedSeries>();
  // A pair on a tag no series has: none match.
  if (columns.some(([col]) => !col)) return out;
  rows: for (let i = 0; i < block.ts.length; i++) {
    for (const [col, v] of columns) if (col![i] !== v) continue rows;
    out.set(i, keyAt(i));
  }
  return out;
}

function keyReader(metric: string, block: SeriesColumns): (i: number) => GroupedSeries {
  const res = own(block.fields, RES);
  if (!res) throw new CorruptDataError('rollup keys block', `no ${RES} column`);
  const tagCols = Object.keys(block.fields).filter((k) => k.startsWith(TAG)).map((k) => [k.slice(TAG.length), block.fields[k]!] as const);
  return (i) => {
    const r = res[i];
    if (typeof r !== 'string') throw new CorruptDataError('rollup keys block', `series ${i} has no resolution list`);
    const tags = nameMap<string>();
    for (const [k, col] of tagCols) {
      const v = col[i];
      if (v === null || v === undefined) continue;
      if (typeof v !== 'string') throw new CorruptDataError('rollup keys block', `tag ${k} of series ${i} is not a string`);
      tags[k] = v;
    }
    return { metric, tags, resolutions: r === '' ? [] : r.split(',') };
  };
}

/**
 * The buckets of a group block: per series ordinal, per field, ascending; with `only`, of those
 * ordinals alone (a query of one series built the buckets of every series its group shares).
 */
export function bucketsOfGroup(block: SeriesColumns, window: number, resolution: string, only?: Ordinals): Map<number, Map<string, Bucket[]>> {
  const what = 'rollup group block';
  const ms = resolutionMs(resolution);
  if (ms === null) throw new CorruptDataError(what, `${resolution} is not a resolution`);
  const base = baseOf(window, ms);
  const series = own(block.fields, SERIES);
  const bucket = own(block.fields, BUCKET);
  if (!series || !bucket) throw new CorruptDataError(what, `no ${SERIES} or ${BUCKET} column`);
  const out = new Map<number, Map<string, Bucket[]>>();
  const names = Object.keys(block.fields).filter((k) => k.endsWith('.count')).map((k) => k.slice(0, -'.count'.length));
  const cols = names.map((f) => {
    const [min, max, first, last] = valueColumns(block.fields, series, f, what, only);
    const byAgg = { sum: sumColumn(block.fields, series, f, what, only), min, max, first, last };
    const c = AGGS.map((a) => (Object.hasOwn(byAgg, a) ? byAgg[a as keyof typeof byAgg] : own(block.fields, `${f}.${a}`)));
    if (c.some((x) => !x)) throw new CorruptDataError(what, `field ${f} lacks a bucket column`);
    return c as (readonly FieldValue[])[];
  });
  for (let i = 0; i < block.ts.length; i++) {
    const s = int(series[i], what);
    if (only && !only.has(s)) continue;
    const start = (base + int(bucket[i], what)) * ms;
    let byField = out.get(s);
    if (!byField) out.set(s, (byField = new Map<string, Bucket[]>()));
    names.forEach((f, k) => {
      const [count, sum, min, max, first, firstAt, last, lastAt] = cols[k]!;
      if (count![i] === null) return;
      let list = byField.get(f);
      if (!list) byField.set(f, (list = []));
      list.push({
        start,
        count: num(count![i], what),
        sum: num(sum![i], what),
        min: num(min![i], what),
        max: num(max![i], what),
        first: num(first![i], what),
        firstTs: start + num(firstAt![i], what),
        last: num(last![i], what),
        lastTs: start + num(lastAt![i], what),
      });
    });
  }
  return out;
}

/**
 * Every series of a rollup object of any column version, with its id, key and buckets per
 * resolution (the raw marker: no resolution). What the day fold reads hourly objects with.
 */
export function decodeRollupObject(bytes: Uint8Array): { window: number; series: Map<string, DecodedRollupSeries> } {
  const { footer, series: entries } = decodeSegment(bytes);
  const out = new Map<string, DecodedRollupSeries>();
  if (!isGroupedRollup(footer)) {
    for (const s of entries) {
      const { id, resolution } = parseRollupSeriesId(s.id);
      let r = out.get(id);
      if (!r) out.set(id, (r = { metric: s.metric, tags: s.tags, byRes: new Map() }));
      if (resolution !== RAW_MARKER) r.byRes.set(resolution, columnsToBuckets(s.ts, s.fields));
    }
    return { window: footer.window, series: out };
  }
  const keys = new Map<number, { key: GroupedSeries; id: string }[]>();
  for (const s of entries) {
    const g = parseGroupEntryId(s.id);
    if (!g) throw new CorruptDataError('rollup object', `entry ${s.id} in a version 3 object`);
    if (g.resolution === null) {
      const list = keysOfBlock(s.metric, s).map((key) => ({ key, id: seriesId(key) }));
      keys.set(g.metric, list);
      for (const { key, id } of list) out.set(id, { metric: key.metric, tags: key.tags, byRes: new Map(key.resolutions.map((r) => [r, new Map<string, Bucket[]>()])) });
      continue;
    }
    const list = keys.get(g.metric);
    if (!list) throw new CorruptDataError('rollup object', `group ${s.id} before its keys`);
    for (const [ordinal, byField] of bucketsOfGroup(s, footer.window, g.resolution)) {
      const k = list[ordinal];
      if (!k || !k.key.resolutions.includes(g.resolution)) throw new CorruptDataError('rollup object', `group ${s.id} holds series ${ordinal}, which its keys do not give ${g.resolution}`);
      const have = out.get(k.id)!.byRes.get(g.resolution)!;
      for (const [f, l] of byField) have.set(f, [...(have.get(f) ?? []), ...l]);
    }
  }
  return { window: footer.window, series: out };
}

/** A version 3 rollup object (a segment object; rollup.md), with its footer entries and bucket rows. */
export function encodeRollupObject(input: RollupObjectInput): { bytes: Uint8Array; entries: SegmentSeriesInput[]; rows: number } {
  const entries = rollupGroupEntries(input.window, input.series);
  let rows = 0;
  for (const e of entries) if (e.id.includes('/')) rows += e.ts.length;
  // Rollup objects stay segment version 3 (rollup.md, version 3): their sums and means are rarely float32s, and a new codec in them would be a rollup format change of its own.
  return { bytes: encodeSegment({ ns: input.ns, shard: input.shard, window: input.window, series: entries }, { version: 3 }), entries, rows };
}

function own(fields: Readonly<Record<string, readonly FieldValue[]>>, name: string): readonly FieldValue[] | undefined {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

function num(v: FieldValue | undefined, what: string): number {
  if (typeof v !== 'number') throw new CorruptDataError(what, `a bucket holds ${JSON.stringify(v)} where a number belongs`);
  return v;
}

function int(v: FieldValue | undefined, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new CorruptDataError(what, `${JSON.stringify(v)} where a row index belongs`);
  return v;
}
