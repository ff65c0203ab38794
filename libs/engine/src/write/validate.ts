import { z } from 'zod';
import { LimitError, SeriesIdentities, ValidationError, nameMap, own, type FieldValue, type SeriesIdentity, type SeriesKey, type Tags, type ValidationIssue } from '@s4/core';
import { runSteps, runStepsSliced, type Slices } from '../concurrency.js';
import type { Fields } from './records.js';
import { distinctSeries, type ScannedWrite } from './scan.js';

export interface WriteLimits {
  readonly maxSamplesPerRequest: number;
  readonly maxFieldsPerSample: number;
  readonly maxTags: number;
  readonly maxTagLength: number;
  readonly maxFutureMs: number;
  /** Levels of arrays/objects inside one field value; deeper values are refused before any recursive check. */
  readonly maxNestingDepth: number;
}

/**
 * Samples of one series from one request as columns, in request order (duplicates kept: the
 * last wins when read). Every column is as long as `ts`; null marks a field the sample lacks.
 */
export interface SeriesWrite {
  readonly id: string;
  readonly key: SeriesKey;
  readonly ts: number[];
  readonly fields: Record<string, FieldValue[]>;
  /** The series' mark when the body was scanned (scan.ts): a number only it holds while it is cached (see HotAppend.hint). */
  readonly mark?: number;
}

/** The fields of a group that has none yet (never written to: Group replaces it first). */
const NO_FIELDS: Record<string, FieldValue[]> = Object.freeze(nameMap<FieldValue[]>());

/** A series' columns while a request is parsed; appending pads columns so all stay aligned. */
class Group {
  ts: number[] = [];
  /** NO_FIELDS until the first row or columns: most groups adopt an entry's own map, so none is made for them. */
  fields: Record<string, FieldValue[]> = NO_FIELDS;
  /** `ts` and `fields` are a request entry's own arrays: copied before anything is appended to them. */
  private adopted = false;
  /** How many columns `fields` has (kept while rows are added, so a full row needs no padding pass). */
  private columns = 0;
  constructor(readonly ident: SeriesIdentity) {}

  /** One sample; null values are absent fields (left out). */
  addRow(ts: number, row: Fields): void {
    if (this.adopted) this.copy();
    else if (this.fields === NO_FIELDS) this.fields = nameMap();
    const n = this.ts.length;
    this.ts.push(ts);
    // `fields` has no prototype: a missing name reads undefined, never an inherited member.
    const fields = this.fields;
    let filled = 0;
    let columns = this.columns;
    for (const f in row) {
      const v = row[f]!;
      if (v === null) continue;
      let col = fields[f];
      if (!col) {
        fields[f] = col = new Array<FieldValue>(n).fill(null);
        columns++;
      }
      col.push(v);
      filled++;
    }
    this.columns = columns;
    if (filled < columns) for (const f in fields) if (fields[f]!.length === n) fields[f]!.push(null);
  }

  /** `fields` is a nameMap the caller built for this call. */
  addColumns(ts: number[], fields: Record<string, FieldValue[]>): void {
    if (this.ts.length === 0) {
      // The common case, one entry per series: adopt the arrays as they are.
      this.ts = ts;
      this.fields = fields;
      this.columns = Object.keys(fields).length;
      this.adopted = true;
      return;
    }
    if (this.adopted) this.copy();
    const n = this.ts.length;
    const before = this.columns;
    for (const t of ts) this.ts.push(t);
    let filled = 0;
    for (const f in fields) {
      let dst = own(this.fields, f);
      if (!dst) {
        this.fields[f] = dst = new Array<FieldValue>(n).fill(null);
        this.columns++;
      } else filled++;
      for (const v of fields[f]!) dst.push(v);
    }
    // Every column the group had got values (the usual case: the same fields again): none to pad.
    if (filled < before) for (const col of Object.values(this.fields)) while (col.length < this.ts.length) col.push(null);
  }

  /** The same series twice in a request may even share its arrays with the other entry: never append to an adopted one. */
  private copy(): void {
    this.ts = this.ts.slice();
    this.fields = nameMap(Object.entries(this.fields).map(([f, c]) => [f, c.slice()] as const));
    this.adopted = false;
  }
}

const NAME_MAX = 256;
const RESERVED = '__proto__ is not accepted as a name (JSON and MessagePack decoders treat it specially)';
const printable = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(NAME_MAX, `${what} is longer than ${NAME_MAX} characters`)
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .regex(/^[^\u0000-\u001f\u007f]*$/, `${what} must not contain control characters`)
    .refine((s) => s !== '__proto__', `${what}: ${RESERVED}`)
    .refine((s) => s.isWellFormed(), `${what} must be well-formed Unicode (no lone surrogates)`);
const text = z.string().refine((s) => s.isWellFormed(), 'strings must be well-formed Unicode (no lone surrogates)');

const fieldValue: z.ZodType<FieldValue> = z.lazy(() =>
  // Any number, NaN and ±Infinity included: MessagePack bodies can carry them and segments store them exactly.
  z.union([z.custom<number>((v) => typeof v === 'number'), z.boolean(), text, z.null(), z.array(fieldValue), z.record(text, fieldValue)]),
);
const timestamp = z.number({ error: 'ts must be a number of milliseconds' }).int('ts must be an integer number of milliseconds').min(0, 'ts must not be negative').max(Number.MAX_SAFE_INTEGER);
const tags = z.record(printable('tag key'), text.pipe(z.string().min(1, 'tag values must not be empty')));
const fields = z.record(printable('field name'), fieldValue);

/** Exported for the test that holds the hand-written fast path to it. */
export const sampleSchema = z.strictObject({
  metric: printable('metric'),
  tags: tags.default({}),
  ts: timestamp,
  fields: fields.refine((f) => Object.keys(f).length > 0, 'fields must name at least one field'),
});
// Columns are checked element by element below (a fast path for plain numbers), not by zod.
const columnarSchema = z.strictObject({ metric: printable('metric'), tags: tags.default({}), ts: z.array(z.unknown()), fields: z.record(printable('field name'), z.array(z.unknown())) });
const bodySchema = z.strictObject({ samples: z.array(z.unknown()).optional(), series: z.array(z.unknown()).optional() });

/** A parsed JSON or MessagePack body, NDJSON text, or a JSON body scanned from its text (scan.ts). */
export type WriteBody = { kind: 'json'; body: unknown } | { kind: 'ndjson'; text: string } | { kind: 'scanned'; scanned: ScannedWrite };

/**
 * Lets go of a parsed body (Ingest, once it is checked): the series keep only the arrays they
 * adopted, and the rest of a request's objects can be collected before its write is durable.
 */
export function releaseBody(input: WriteBody): void {
  if (input.kind === 'json') input.body = undefined;
  else if (input.kind === 'ndjson') input.text = '';
  else {
    input.scanned.bytes = EMPTY_BYTES;
    input.scanned.entries = [];
  }
}

const EMPTY_BYTES = new Uint8Array(0);

const MAX_ISSUES = 100;

/** Entries parsed between two looks at the clock (parseWriteSliced). */
const STEP = 256;

/** Series identities of the general path (see SeriesIdentities: about 360 bytes a series, at most 2 generations of S4_SERIES_CACHE_ENTRIES series; scanned bodies have their own cache in scan.ts). */
const identities = new SeriesIdentities();

/** Sizes the identity cache's generations (S4_SERIES_CACHE_ENTRIES; see sizeSeriesCaches in scan.ts, which sizes both caches). */
export function sizeIdentities(perGeneration: number): void {
  identities.resize(perGeneration);
}

/** The identity of a series whose names are checked (isName), shared by every path that reads writes. */
export function identityOf(metric: string, tags: Tags): SeriesIdentity {
  return identities.of(metric, tags);
}

/**
 * Validate a whole write request and group its samples by series. Throws ValidationError
 * listing every problem (up to 100) with where it is, or LimitError; on either, nothing is written.
 */
export function parseWrite(input: WriteBody, limits: WriteLimits, now: number): SeriesWrite[] {
  return runSteps(parseSteps(input, limits, now));
}

/** parseWrite without the hand-written fast paths: every entry through the schema. For the test that holds the two to the same answers. */
export function parseWriteBySchema(input: WriteBody, limits: WriteLimits, now: number): SeriesWrite[] {
  return runSteps(parseSteps(input, limits, now, false));
}

/**
 * parseWrite for the HTTP thread: a request of 40,000 series takes tens of milliseconds to
 * check, so the event loop gets a turn whenever a slice has run `sliceMs` (health checks and small
 * queries wait no longer than that). The whole request is still checked before anything is written.
 */
export function parseWriteSliced(input: WriteBody, limits: WriteLimits, now: number, sliceMs: number | Slices): Promise<SeriesWrite[]> {
  return runStepsSliced(parseSteps(input, limits, now), sliceMs);
}

/** parseWrite as steps: yields every STEP entries so that a caller may pause between them. */
function* parseSteps(input: WriteBody, limits: WriteLimits, now: number, fast = true): Generator<void, SeriesWrite[]> {
  const issues: ValidationIssue[] = [];
  const grouped = new Map<string, Group>();
  let count = 0;
  const countSamples = (n: number) => {
    count += n;
    if (count > limits.maxSamplesPerRequest)
      throw new LimitError('S4_MAX_SAMPLES_PER_REQUEST', limits.maxSamplesPerRequest, `request has more than ${limits.maxSamplesPerRequest} samples; split it`, 413);
  };
  /** The group of a series, or null (with an issue recorded) when its tags break a limit. */
  const groupOf = (where: string, metric: string, tags: Tags) => groupOfIdent(where, identities.of(metric, tags));
  const groupOfIdent = (where: string, ident: SeriesIdentity) => {
    if (ident.tagCount > limits.maxTags || ident.longestTagValue > limits.maxTagLength) {
      const problem = checkSeriesLimits(ident.key, limits)!;
      issues.push({ path: `${where}${problem.path}`, message: problem.message });
      return null;
    }
    let g = grouped.get(ident.id);
    if (!g) grouped.set(ident.id, (g = new Group(ident)));
    return g;
  };
  const add = (where: string, g: Group | null, ts: number, row: Fields) => {
    if (!g) return;
    let present = 0;
    for (const f in row) if (row[f] !== null) present++;
    const problem = checkFutureTs(ts, limits, now) ?? checkFieldCount(present, limits);
    if (problem) {
      issues.push({ path: `${where}${problem.path}`, message: problem.message });
      return;
    }
    g.addRow(ts, row);
  };
  const addSample = (where: string, raw: unknown) => {
    const plain = fast ? plainSample(raw, limits.maxNestingDepth) : null;
    if (plain) {
      add(where, groupOf(where, plain.metric, plain.tags), plain.ts, plain.fields);
      return;
    }
    const reserved = protoName(raw);
    if (reserved) {
      issues.push({ path: `${where}${reserved}`, message: RESERVED });
      return;
    }
    const deep = tooDeep(raw, limits.maxNestingDepth);
    if (deep) {
      issues.push({ path: `${where}${deep}`, message: `nested deeper than ${limits.maxNestingDepth} levels (limit S4_MAX_NESTING_DEPTH=${limits.maxNestingDepth})` });
      return;
    }
    const r = sampleSchema.safeParse(raw);
    if (!r.success) {
      for (const i of r.error.issues) issues.push({ path: `${where}${i.path.map((p) => `.${String(p)}`).join('')}`, message: i.message });
      return;
    }
    add(where, groupOf(where, r.data.metric, r.data.tags), r.data.ts, r.data.fields);
  };
  /** A `series` entry the fast path did not take: checked by the schema, every problem named. */
  const addSeriesChecked = (where: string, raw: unknown) => {
    const reserved = protoName(raw);
    if (reserved) {
      issues.push({ path: `${where}${reserved}`, message: RESERVED });
      return;
    }
    const r = columnarSchema.safeParse(untypedColumns(raw));
    if (!r.success) {
      for (const i of r.error.issues.slice(0, 10)) issues.push({ path: `${where}${i.path.map((p) => `.${String(p)}`).join('')}`, message: i.message });
      return;
    }
    const s = r.data;
    countSamples(s.ts.length);
    for (const [f, col] of Object.entries(s.fields))
      if (col.length !== s.ts.length) issues.push({ path: `${where}.fields.${f}`, message: `has ${col.length} values but ts has ${s.ts.length}` });
    for (let i = 0; i < s.ts.length && issues.length < MAX_ISSUES; i++) {
      const t = s.ts[i];
      if (!(typeof t === 'number' && Number.isSafeInteger(t) && t >= 0)) issues.push({ path: `${where}.ts[${i}]`, message: 'ts must be a non-negative integer number of milliseconds' });
    }
    for (const [f, col] of Object.entries(s.fields))
      for (let i = 0; i < col.length && issues.length < MAX_ISSUES; i++) {
        const v = col[i];
        if (typeof v === 'number') continue;
        const deep = tooDeep(v, limits.maxNestingDepth);
        if (deep) issues.push({ path: `${where}.fields.${f}[${i}]${deep}`, message: `nested deeper than ${limits.maxNestingDepth} levels (limit S4_MAX_NESTING_DEPTH=${limits.maxNestingDepth})` });
        else if (!fieldValue.safeParse(v).success) issues.push({ path: `${where}.fields.${f}[${i}]`, message: 'not a number, boolean, string, null or nested JSON value' });
      }
    const ts = s.ts as number[];
    for (let i = 0; i < ts.length && issues.length < MAX_ISSUES; i++) {
      const problem = checkFutureTs(ts[i]!, limits, now);
      if (problem) issues.push({ path: `${where}.ts[${i}]`, message: problem.message });
    }
    const names = Object.keys(s.fields);
    if (names.length > limits.maxFieldsPerSample)
      for (let i = 0; i < ts.length && issues.length < MAX_ISSUES; i++) {
        const problem = checkFieldCount(names.filter((f) => s.fields[f]![i] !== null).length, limits);
        if (problem) issues.push({ path: `${where}[${i}]${problem.path}`, message: problem.message });
      }
    if (issues.length) return;
    groupOf(where, s.metric, s.tags)?.addColumns(ts, nameMap(Object.entries(s.fields as Record<string, FieldValue[]>)));
  };

  if (input.kind === 'scanned') {
    const { entries, samples, ndjson } = input.scanned;
    // The scan took the shape; the checks plainColumns and plainSample make on values are made
    // here. An entry they would not take sends the whole body the general way, for its wording.
    const latest = now + limits.maxFutureMs;
    let usual = fast;
    for (let i = 0; i < entries.length && usual; i++) {
      const e = entries[i]!;
      if (e.names > limits.maxFieldsPerSample || e.depth > limits.maxNestingDepth) usual = false;
      for (let j = 0; j < e.ts.length && usual; j++) if (e.ts[j]! > latest) usual = false;
    }
    if (!usual) {
      return yield* parseSteps(input.scanned.general(), limits, now, fast);
    }
    const what = samples ? 'samples' : 'series';
    const where = ndjson ? (i: number) => `line ${i + 1}` : (i: number) => `${what}[${i}]`;
    // An NDJSON body counts its samples line by line, as its general path does (it stops counting at the issue limit).
    const perEntry = !samples || ndjson;
    if (!perEntry) countSamples(entries.length);
    if (distinctSeries(input.scanned)) {
      // The scrape shape, each series once: an entry is its series' whole write, and is its
      // SeriesWrite as it is (what grouping would make of it, without the map, a group and a
      // second object per series).
      const out: SeriesWrite[] = [];
      for (let i = 0; i < entries.length && issues.length < MAX_ISSUES; i++) {
        if ((i & (STEP - 1)) === STEP - 1) yield;
        const e = entries[i]!;
        if (perEntry) countSamples(e.ts.length);
        // As below: once a series body has a problem, its entries are counted but not checked.
        if (!samples && issues.length > 0) continue;
        const ident = e;
        if (ident.tagCount > limits.maxTags || ident.longestTagValue > limits.maxTagLength) {
          const problem = checkSeriesLimits(ident.key, limits)!;
          issues.push({ path: `${where(i)}${problem.path}`, message: problem.message });
        } else if (issues.length === 0) out.push(e);
      }
      if (issues.length > 0) throw new ValidationError(issues.slice(0, MAX_ISSUES));
      return out;
    }
    for (let i = 0; i < entries.length && issues.length < MAX_ISSUES; i++) {
      if ((i & (STEP - 1)) === STEP - 1) yield;
      const e = entries[i]!;
      if (perEntry) countSamples(e.ts.length);
      if (samples || issues.length === 0) groupOfIdent(where(i), e)?.addColumns(e.ts, e.fields);
    }
  } else if (input.kind === 'ndjson') {
    const lines = input.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if ((i & (STEP - 1)) === STEP - 1) yield;
      const line = lines[i]!;
      if (line.trim() === '' || issues.length >= MAX_ISSUES) continue;
      countSamples(1);
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        issues.push({ path: `line ${i + 1}`, message: `not valid JSON: ${(e as Error).message}` });
        continue;
      }
      addSample(`line ${i + 1}`, raw);
    }
  } else {
    const body = bodySchema.safeParse(input.body);
    if (!body.success) {
      throw new ValidationError(
        body.error.issues.map((i) => ({
          path: i.path.join('.') || 'body',
          message: i.code === 'invalid_type' && i.path.length === 0 ? 'body must be an object with "samples" and/or "series"' : i.message,
        })),
      );
    }
    const { samples = [], series = [] } = body.data;
    if (samples.length === 0 && series.length === 0) throw new ValidationError([{ path: 'body', message: 'no samples: give "samples" or "series"' }]);
    countSamples(samples.length);
    for (let i = 0; i < samples.length && issues.length < MAX_ISSUES; i++) {
      if ((i & (STEP - 1)) === STEP - 1) yield;
      addSample(`samples[${i}]`, samples[i]);
    }
    for (let si = 0; si < series.length && issues.length < MAX_ISSUES; si++) {
      if ((si & (STEP - 1)) === STEP - 1) yield;
      const raw = series[si];
      const plain = fast ? plainColumns(raw, limits, now) : null;
      if (plain) {
        countSamples(plain.ts.length);
        // As the schema path: once the request has a problem, entries are checked but not grouped.
        if (issues.length === 0) groupOf(`series[${si}]`, plain.metric, plain.tags)?.addColumns(plain.ts, plain.fields);
      } else addSeriesChecked(`series[${si}]`, raw);
    }
  }
  if (issues.length > 0) throw new ValidationError(issues.slice(0, MAX_ISSUES));
  if (count === 0) throw new ValidationError([{ path: 'body', message: 'no samples in the request' }]);
  const out: SeriesWrite[] = [];
  for (const g of grouped.values()) out.push({ id: g.ident.id, key: g.ident.key, ts: g.ts, fields: g.fields });
  return out;
}

const EMPTY_TAGS: Tags = Object.freeze({});

/**
 * A `series` entry checked by hand, as `plainSample` does for samples: the common entry (plain
 * names, integer timestamps, number or plain JSON columns of the right length, within every
 * limit) is walked once, its arrays adopted as they are; anything else returns null and is
 * checked by the schema, which names each problem. So this never accepts what the schema path
 * refuses, and reads what it accepts as that path does (the property test holds it).
 */
export function plainColumns(raw: unknown, limits: WriteLimits, now: number): { metric: string; tags: Tags; ts: number[]; fields: Record<string, FieldValue[]> } | null {
  if (!isPlainObject(raw)) return null;
  for (const k in raw) if (!SAMPLE_KEYS.has(k)) return null;
  const { metric, tags, fields } = raw;
  if (!isName(metric)) return null;
  if (tags !== undefined) {
    if (!isPlainObject(tags)) return null;
    for (const k in tags) {
      const v = tags[k];
      if (!isName(k) || typeof v !== 'string' || v.length === 0 || !v.isWellFormed()) return null;
    }
  }
  const ts = plainArray(raw.ts);
  if (!ts) return null;
  const latest = now + limits.maxFutureMs;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i];
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0 || t > latest) return null;
  }
  if (!isPlainObject(fields)) return null;
  const out = nameMap<FieldValue[]>();
  let names = 0;
  for (const f in fields) {
    // A wide entry needs a count per sample: the schema path does it.
    if (!isName(f) || ++names > limits.maxFieldsPerSample) return null;
    const col = plainArray(fields[f]);
    if (!col || col.length !== ts.length) return null;
    for (let i = 0; i < col.length; i++) {
      const v = col[i];
      if (typeof v !== 'number' && !plainValue(v, 0, limits.maxNestingDepth)) return null;
    }
    out[f] = col as FieldValue[];
  }
  return { metric, tags: (tags ?? EMPTY_TAGS) as Tags, ts: ts as number[], fields: out };
}

/** A plain array as it is, a typed array (MessagePack bodies) as a plain copy; else null. */
function plainArray(v: unknown): unknown[] | null {
  if (Array.isArray(v)) return v as unknown[];
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<unknown>);
  return null;
}

type ParsedSample = z.infer<typeof sampleSchema>;

const SAMPLE_KEYS = new Set(['metric', 'tags', 'ts', 'fields']);
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
export const isName = (v: unknown): v is string => typeof v === 'string' && v !== '__proto__' && v.length >= 1 && v.length <= NAME_MAX && !CONTROL.test(v) && v.isWellFormed();

/**
 * The common sample checked by hand: zod costs several microseconds per sample (tens for a
 * nested record), which dominated ingest. Flat values and nested records (arrays and plain
 * objects down to `maxDepth` levels) are walked once here; anything unusual (a bad name, a lone
 * surrogate, `__proto__` anywhere, a typed array, a value too deep) returns null and goes
 * through the schema, which words the error. So this path never accepts what the schema
 * refuses, and what it accepts reads as the schema would read it (the property test holds it).
 */
export function plainSample(raw: unknown, maxDepth = 64): ParsedSample | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const o = raw as Record<string, unknown>;
  for (const k in o) if (!SAMPLE_KEYS.has(k)) return null;
  const { metric, tags, ts, fields } = o;
  if (!isName(metric) || typeof ts !== 'number' || !Number.isSafeInteger(ts) || ts < 0) return null;
  if (tags !== undefined) {
    if (!isPlainObject(tags)) return null;
    for (const k in tags) {
      const v = tags[k];
      if (!isName(k) || typeof v !== 'string' || v.length === 0 || !v.isWellFormed()) return null;
    }
  }
  if (!isPlainObject(fields)) return null;
  let n = 0;
  for (const k in fields) {
    n++;
    if (!isName(k)) return null;
    const v = fields[k];
    if (v === null || typeof v === 'number' || typeof v === 'boolean') continue;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return null;
    } else if (!plainValue(v, 0, maxDepth)) return null;
  }
  if (n === 0) return null;
  // The request's own object, not a copy: rows are only read (for...in), never changed.
  return { metric, tags: (tags ?? {}) as Record<string, string>, ts, fields: fields as Fields };
}

/** A JSON value the schema would read as itself, no deeper than `max` levels; recursion is bounded by `max` (at most 1,000). */
function plainValue(v: unknown, depth: number, max: number): boolean {
  switch (typeof v) {
    case 'number':
    case 'boolean':
      return true;
    case 'string':
      return v.isWellFormed();
    case 'object': {
      if (v === null) return true;
      if (depth >= max) return false;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!plainValue(v[i], depth + 1, max)) return false;
        return true;
      }
      if (!isPlainObject(v)) return false;
      for (const k in v) if (k === '__proto__' || !k.isWellFormed() || !plainValue(v[k], depth + 1, max)) return false;
      return true;
    }
    default:
      return false;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `.fields.__proto__` or `.tags.__proto__` when a sample or series uses it as a name (schemas silently drop it). */
function protoName(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null) return null;
  for (const part of ['fields', 'tags'] as const) {
    const m = (raw as Record<string, unknown>)[part];
    if (typeof m === 'object' && m !== null && Object.hasOwn(m, '__proto__')) return `.${part}.__proto__`;
  }
  return null;
}

/**
 * Where a value nests deeper than `max` levels below a sample's `fields` (or below a column
 * value), or null. Iterative, so a body nested 100,000 deep costs a loop, not the stack that the
 * recursive schema check would overflow.
 */
function tooDeep(root: unknown, max: number): string | null {
  // A sample's own object and its `fields` map are two levels above the values the limit counts.
  const sample = typeof root === 'object' && root !== null && !Array.isArray(root) && 'fields' in root;
  const start = sample ? (root).fields : root;
  const stack: [unknown, number, string][] = [[start, sample ? -1 : 0, sample ? '.fields' : '']];
  while (stack.length > 0) {
    const [v, depth, path] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return path;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push([v[i], depth + 1, `${path}[${i}]`]);
    else for (const k of Object.keys(v)) stack.push([(v as Record<string, unknown>)[k], depth + 1, `${path}.${k}`]);
  }
  return null;
}

function checkSeriesLimits(key: SeriesKey, limits: WriteLimits): ValidationIssue | null {
  const tagEntries = Object.entries(key.tags);
  if (tagEntries.length > limits.maxTags) return { path: '.tags', message: `has ${tagEntries.length} tags (limit S4_MAX_TAGS=${limits.maxTags})` };
  for (const [k, v] of tagEntries)
    if (v.length > limits.maxTagLength) return { path: `.tags.${k}`, message: `value is ${v.length} characters long (limit S4_MAX_TAG_LENGTH=${limits.maxTagLength})` };
  return null;
}

function checkFieldCount(n: number, limits: WriteLimits): ValidationIssue | null {
  return n > limits.maxFieldsPerSample ? { path: '.fields', message: `has ${n} fields (limit S4_MAX_FIELDS_PER_SAMPLE=${limits.maxFieldsPerSample})` } : null;
}

function checkFutureTs(ts: number, limits: WriteLimits, now: number): ValidationIssue | null {
  if (ts > now + limits.maxFutureMs)
    return { path: '.ts', message: `${ts} is ${Math.round((ts - now) / 1000)} s in the future (limit S4_MAX_FUTURE_MS=${limits.maxFutureMs})` };
  return null;
}

/** MessagePack bodies may carry columns as typed arrays (Float64Array, ...): read them as plain arrays. */
function untypedColumns(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null) return raw;
  const o = raw as { ts?: unknown; fields?: unknown };
  const plain = (v: unknown) => (ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v as unknown as ArrayLike<number>) : v);
  const fields = typeof o.fields === 'object' && o.fields !== null ? Object.fromEntries(Object.entries(o.fields).map(([k, v]) => [k, plain(v)])) : o.fields;
  return { ...o, ts: plain(o.ts), fields };
}
