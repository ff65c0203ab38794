import { grown, internName, newIdentity, type FieldValue, type SeriesIdentity, type SeriesKey, type Tags } from '@s4/core';
import {
  DeferredNumbers,
  JsonValuePacker,
  MsgpackValuePacker,
  mpRead,
  msgpack,
  printable,
  readJsonNumber,
  readMsgpackContainer,
  readMsgpackNumber,
  readMsgpackStringHeader,
} from '@s4/format';
import { isName, sizeIdentities, type SeriesWrite, type WriteBody } from './validate.js';

/**
 * A `{"series":[…]}` or `{"samples":[…]}` write body (or an NDJSON one, a sample a line) read straight from its bytes, for the scrape
 * single-sample and record shapes: compact JSON, every entry `{"metric":…,"tags":{…},"ts":[…],"fields":{"name":[…],…}}`
 * (or a sample `{"metric":…,"tags":{…},"ts":…,"fields":{"name":…,…}}`) in that order, ASCII
 * without escapes, integer timestamps. Its series are recognised by the text of their
 * `"metric":…,"tags":{…}` (a bounded cache from that text to the series' identity), so a repeated
 * scrape builds no tag objects and hashes nothing; numbers are read from their characters, and any
 * other value (a nested record, a string, a boolean) is packed from its characters into the
 * MessagePack the hot log holds (format hotlog/json-values.ts), a PackedValue the record encoder
 * copies: no object of it is made. What it cannot read this way (any other shape, a name the
 * validator refuses, a value outside the packer's subset) makes it return null, and the body takes
 * the JSON.parse path with its own errors. What it reads is what JSON.parse + plainColumns read (the
 * property test in scan.spec.ts holds them together); the limits are checked in parseWrite.
 */
export class ScannedWrite {
  constructor(
    /**
     * The body's bytes: ASCII (the scan reads nothing else), so their latin1 text is the body's
     * text, which parseWrite falls back to when an entry needs the general path (`general()`).
     * The request's text is never made otherwise: 4 MB of string per scrape round.
     */
    public bytes: Uint8Array,
    public entries: ScannedEntry[],
    /** The entries are `samples` (one sample each), not `series`. */
    readonly samples: boolean,
    /**
     * No generation of the text cache was dropped while the body was scanned, so every entry of
     * one series holds the same mark (distinctSeries may be asked); a mark is let go, and a new
     * one made for its series, only when a generation is dropped.
     */
    readonly marksAgree = true,
    /** The body is NDJSON, a sample a line (`samples` too): errors name lines, and its general path is the NDJSON one. */
    readonly ndjson = false,
    /** The body is MessagePack (scanMsgpackSteps): its general path is msgpackr's decode. */
    readonly msgpack = false,
  ) {}

  /** The body as text (see `bytes`; not for a MessagePack body). */
  text(): string {
    return latin1(this.bytes, 0, this.bytes.length);
  }

  /** The body as the general path reads it (an entry needs the validator's checks, or its wording). */
  general(): WriteBody {
    if (this.msgpack) return { kind: 'json', body: msgpack.unpack(this.bytes) as unknown };
    const text = this.text();
    return this.ndjson ? { kind: 'ndjson', text } : { kind: 'json', body: JSON.parse(text) as unknown };
  }
}

/**
 * An entry is also its series' SeriesWrite (`id`, `key`, `ts`, `fields`) when the body names each
 * series once: no second object per series. It is its series' identity too (its key's tag count
 * and longest tag value, for the limits).
 */
export interface ScannedEntry extends SeriesWrite, SeriesIdentity {
  /** The series' mark (shared by every key text of one identity): see distinctSeries. */
  readonly mark: number;
  readonly ts: number[];
  /** The columns by name (a map without a prototype); every column is as long as `ts`. */
  readonly fields: Record<string, FieldValue[]>;
  /** How many fields. */
  readonly names: number;
  /** Levels of arrays and objects in its deepest value (0: none), for S4_MAX_NESTING_DEPTH. */
  readonly depth: number;
}

/**
 * Which request last looked at a series (distinctSeries): a mark is a number, its request in
 * `markRequest`. One per series id, shared by every key text the cache holds for it (tags in
 * another order name the same series), for as long as one of them is cached (`markRefs`: how
 * many). Rows of typed arrays, not an object per series: one object fewer per cached series for
 * the HTTP thread's major GCs to mark (issue 12). Distinct series of one scan hold distinct
 * marks (none is let go while a scan that agrees runs), whatever becomes of a mark later.
 */
class Marks {
  private readonly byId = new Map<string, number>();
  request = new Float64Array(1024);
  private refs = new Int32Array(1024);
  private readonly free: number[] = [];
  private used = 0;

  /** The mark of `id`, made if it has none, with one more reference. */
  take(id: string): number {
    let m = this.byId.get(id);
    if (m === undefined) {
      m = this.free.pop();
      if (m === undefined) {
        m = this.used++;
        if (m >= this.refs.length) {
          this.request = grown(this.request, 2 * this.refs.length);
          this.refs = grown(this.refs, 2 * this.refs.length);
        }
      }
      this.request[m] = 0;
      this.refs[m] = 0;
      this.byId.set(id, m);
    }
    this.refs[m]!++;
    return m;
  }

  /** One more reference to mark `m`, held already. */
  ref(m: number): number {
    this.refs[m]!++;
    return m;
  }

  /** One reference to mark `m` (of `id`) fewer: let go with its last. */
  drop(m: number, id: string): void {
    if (--this.refs[m]! > 0) return;
    this.byId.delete(id);
    this.free.push(m);
  }
}

const marks = new Marks();
let requests = 0;

/**
 * Whether no series appears twice among a scanned body's entries (the scrape shape: then each entry is its
 * series' whole write, and parseWrite needs no grouping map). Synchronous on purpose: a mark
 * holds one request's number at a time, so no other request may run between its reads.
 */
export function distinctSeries({ entries, marksAgree }: ScannedWrite): boolean {
  if (!marksAgree) return false;
  const request = ++requests;
  for (let i = 0; i < entries.length; i++) {
    const m = entries[i]!.mark;
    if (marks.request[m] === request) return false;
    marks.request[m] = request;
  }
  return true;
}

/** At most this many entries of a `samples` body are scanned, unless they are this long on average (see the check where entries are added). */
const MAX_SAMPLES = 64;
const LARGE_ENTRY_BYTES = 512;

/** Entries scanned between two looks at the clock. */
const STEP = 256;

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const SERIES = ascii('{"series":[');
const SAMPLES = ascii('{"samples":[');
const METRIC = ascii('{"metric":"');
const TS = ascii(',"ts":');
const FIELDS = ascii(',"fields":{');
const TAGS = ascii(',"tags":{');

/** Whether `bytes` holds `what` at `at`. */
function at(bytes: Uint8Array, i: number, what: Uint8Array): boolean {
  if (i + what.length > bytes.length) return false;
  for (let k = 0; k < what.length; k++) if (bytes[i + k] !== what[k]) return false;
  return true;
}

/**
 * Identities by the raw text of `"metric":…,"tags":{…}`, looked up by a hash of the characters
 * where they stand in the body (no string is cut out of the body for a series seen before),
 * two generations of S4_SERIES_CACHE_ENTRIES series (65,536 by default). An entry is a row of its
 * generation (its series' id, key, tag count and longest tag value, and mark), its key text in
 * the generation's byte arena, and the generation's map holds one row per hash (a collision
 * chains through `next`). Rows, not an object per series: the HTTP thread's major GCs mark every
 * live object, and at a million series these caches hold every series (issue 12). A series met
 * only here is not in the identity cache of the general path (SeriesIdentities): at a million
 * series both held every series, each with its own copy of the key text (a Buffer of ~100 bytes
 * beside its bytes here, a string there).
 */
class TextIdentities {
  /** The generation rows are added to: `of` answers a row of it (read it before the next `of`). */
  current = new Generation();
  private older = new Generation();
  /** Generations dropped so far. */
  rotations = 0;

  constructor(private perGeneration = 65_536) {}

  resize(perGeneration: number): void {
    this.perGeneration = perGeneration;
  }

  /**
   * The row in `current` of the key text bytes[start, end), or -1 when its names are not all plain
   * (the general path words the refusal). `h`: the text's hash, as the scan made it while reading
   * the text (stringEnd).
   */
  of(bytes: Uint8Array, start: number, end: number, h: number, make: (bytes: Uint8Array, start: number, end: number) => SeriesIdentity | null = identityOfJson): number {
    const len = end - start;
    const row = this.current.find(h, bytes, start, len);
    if (row >= 0) return row;
    const older = this.older;
    const o = older.find(h, bytes, start, len);
    let ident: SeriesIdentity;
    if (o >= 0) ident = older.identity(o);
    else {
      const made = make(bytes, start, end);
      if (!made) return -1;
      ident = made;
    }
    // Counted before the older generation is dropped, so a mark moving up is never let go. A row
    // moving up holds its series' mark already: one more reference, not a lookup by the id.
    const mark = o >= 0 ? marks.ref(older.mark[o]!) : marks.take(ident.id);
    if (this.current.size >= this.perGeneration) {
      this.rotations++;
      for (let first of older.map.values()) for (; first >= 0; first = older.next[first]!) marks.drop(older.mark[first]!, older.ids[first]!);
      this.older = this.current;
      this.current = new Generation();
    }
    // Found in the generation that was the older one before any rotation above: its text is in that arena still.
    return o >= 0 ? this.current.add(h, older.text, older.at[o]!, len, ident, mark) : this.current.add(h, bytes, start, len, ident, mark);
  }
}

/** A generation of the key-text cache: its rows by hash, and the bytes of their texts one after another. */
class Generation {
  /** Hash → the first row of its chain (`next`: the chain's next row, or -1). */
  readonly map = new Map<number, number>();
  text = new Uint8Array(64 * 1024);
  private used = 0;
  private rows = 0;
  /** Per row: where its text is in `text`, its length, the next row of its hash, its mark, its key's tag count and longest tag value. */
  at = new Int32Array(256);
  len = new Int32Array(256);
  next = new Int32Array(256);
  mark = new Int32Array(256);
  tagCount = new Int32Array(256);
  longest = new Int32Array(256);
  readonly ids: string[] = [];
  readonly keys: SeriesKey[] = [];

  get size(): number {
    return this.rows;
  }

  find(h: number, bytes: Uint8Array, start: number, len: number): number {
    const text = this.text;
    for (let e = this.map.get(h) ?? -1; e >= 0; e = this.next[e]!)
      if (this.len[e] === len) {
        const at = this.at[e]!;
        let k = 0;
        while (k < len && bytes[start + k] === text[at + k]) k++;
        if (k === len) return e;
      }
    return -1;
  }

  /** The row's identity, as a fresh object (a row moving up to the newer generation). */
  identity(row: number): SeriesIdentity {
    return { id: this.ids[row]!, key: this.keys[row]!, tagCount: this.tagCount[row]!, longestTagValue: this.longest[row]! };
  }

  /** A new row for the key text from[at, at + len). */
  add(h: number, from: Uint8Array, at: number, len: number, ident: SeriesIdentity, mark: number): number {
    if (this.used + len > this.text.length) {
      const bigger = new Uint8Array(Math.max(this.text.length * 2, this.used + len));
      bigger.set(this.text.subarray(0, this.used));
      this.text = bigger;
    }
    this.text.set(from.subarray(at, at + len), this.used);
    const row = this.rows++;
    if (row >= this.at.length) this.grow(2 * this.at.length);
    this.at[row] = this.used;
    this.len[row] = len;
    this.next[row] = this.map.get(h) ?? -1;
    this.mark[row] = mark;
    this.tagCount[row] = ident.tagCount;
    this.longest[row] = ident.longestTagValue;
    this.ids.push(ident.id);
    this.keys.push(ident.key);
    this.used += len;
    this.map.set(h, row);
    return row;
  }

  private grow(n: number): void {
    this.at = grown(this.at, n);
    this.len = grown(this.len, n);
    this.next = grown(this.next, n);
    this.mark = grown(this.mark, n);
    this.tagCount = grown(this.tagCount, n);
    this.longest = grown(this.longest, n);
  }
}

/** bytes[start, end) (ASCII) as a string. */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

/** The identity of the JSON key text bytes[start, end) the scanner delimited (see identityOfText). */
function identityOfJson(bytes: Uint8Array, start: number, end: number): SeriesIdentity | null {
  return identityOfText(latin1(bytes, start, end));
}

/**
 * A key text the scanner delimited (valid JSON members without escapes) parsed and checked as
 * plainColumns checks it, its strings interned (the parsed object is this function's own).
 */
function identityOfText(text: string): SeriesIdentity | null {
  let o: { metric?: unknown; tags?: unknown };
  try {
    o = JSON.parse(`{${text}}`) as typeof o;
  } catch {
    return null;
  }
  const { metric, tags } = o;
  if (!isName(metric)) return null;
  if (tags !== undefined) {
    if (typeof tags !== 'object' || tags === null) return null;
    const t = tags as Record<string, unknown>;
    for (const k in t) {
      const v = t[k];
      if (!isName(k) || typeof v !== 'string' || v.length === 0 || !v.isWellFormed()) return null;
      t[k] = internName(v);
    }
  }
  return newIdentity(internName(metric), (tags ?? EMPTY_TAGS) as Tags);
}

const EMPTY_TAGS: Tags = Object.freeze({});

const identities = new TextIdentities();

/**
 * Sizes the write path's two series caches (this key-text cache and the identity cache behind it)
 * to `perGeneration` series a generation: S4_SERIES_CACHE_ENTRIES, set once at start. A scrape of
 * more active series than that misses on every series every round (names checked and hashed again).
 */
export function sizeSeriesCaches(perGeneration: number): void {
  identities.resize(perGeneration);
  sizeIdentities(perGeneration);
}

/**
 * An entry's columns by field name: a plain object whose prototype is an empty object without
 * one, so no name inherits anything (as a nameMap), but V8 keeps it in fast mode: a nameMap
 * (`Object.create(null)`) is a dictionary, 4× dearer to make, and every `for...in` over it (the
 * admission's count, the record encoder) builds its key list again. One per entry of 40,000.
 */
const Columns = function () {} as unknown as new () => Record<string, FieldValue[]>;
Columns.prototype = Object.freeze(Object.create(null) as object);

/**
 * The field names the scanner read last, by their place in an entry (strings already checked by
 * isName), and their bytes: a record's fields come in the same order entry after entry.
 */
const lastNames: string[] = ['value'];
const lastNamesBytes: Uint8Array[] = [ascii('value')];
/** Places remembered (a wider entry's later names are read each time). */
const NAME_PLACES = 64;

/**
 * The field name bytes[start, end) (plain ASCII), the `place`-th of its entry, or null when the
 * validator refuses it. The previous entry's name at this place again (the usual case) is that
 * string, already checked.
 */
function fieldName(bytes: Uint8Array, start: number, end: number, place: number): string | null {
  const name = lastNames[place];
  const known = lastNamesBytes[place];
  if (name !== undefined && end - start === known!.length && at(bytes, start, known!)) return name;
  const made = latin1(bytes, start, end);
  if (!isName(made)) return null;
  if (place < NAME_PLACES) {
    lastNames[place] = made;
    lastNamesBytes[place] = bytes.slice(start, end);
  }
  return made;
}

/**
 * Scans a body's bytes as steps (a yield every STEP entries, for a sliced caller); null when it is
 * not the shape above. Never throws. A body it takes is ASCII without a backslash (so no `\u`
 * escape) and names nothing `__proto__` (isName refuses it as a metric, tag key or field name, the
 * packer as a key): the caller needs neither its text nor the checks a JSON.parse of it needs.
 */
export function* scanSeriesSteps(bytes: Uint8Array, ndjson = false): Generator<void, ScannedWrite | null> {
  const rotations = identities.rotations;
  const samples = ndjson || at(bytes, 0, SAMPLES);
  if (!samples && !at(bytes, 0, SERIES)) return null;
  const n = bytes.length;
  let i = ndjson ? 0 : samples ? SAMPLES.length : SERIES.length;
  const entries: ScannedEntry[] = [];
  /**
   * End of a plain string starting at `from` (after its opening quote): the index of its closing
   * quote, or -1. Its characters (and closing quote) are hashed into `keyHash` on the way, which a
   * key text's strings use: the text is read here and once more where it is compared with the
   * cached copy, not a third time for the hash. The same text always hashes the same.
   */
  let keyHash = 0;
  const stringEnd = (from: number): number => {
    let h = keyHash;
    for (let j = from; j < n; j++) {
      const c = bytes[j]!;
      h = Math.imul(h ^ c, 0x01000193);
      if (c === 0x22) {
        keyHash = h;
        return j;
      }
      if (c < 0x20 || c >= 0x7f || c === 0x5c) return -1;
    }
    return -1;
  };
  /** Numbers whose text JSON.parse reads, at the end, in one call (see readJsonNumber). */
  const numbers = new DeferredNumbers();
  /** The columns and places of the field values among them, and their index in `numbers`. */
  const laterCol: FieldValue[][] = [];
  const laterAt: number[] = [];
  const laterIndex: number[] = [];
  /** Nested values, strings and booleans, packed as the hot log holds them (made at the first). */
  let packer: JsonValuePacker | null = null;
  /** readValue's value, and its index in `numbers` when it is read there (else -1). */
  let value: FieldValue = null;
  let later = -1;
  /** A field's value at `at` into `value` (a number, null, or a PackedValue); the index after it, or -1. */
  const readValue = (at: number): number => {
    const c = bytes[at];
    later = -1;
    if (c === 0x2d || (c! >= 0x30 && c! <= 0x39)) {
      const v = readJsonNumber(bytes, at);
      if (v === null) return -1;
      value = v.value;
      if (!v.exact) later = numbers.add(bytes, v.start, v.end);
      return v.end;
    }
    if (c === 0x6e) {
      // A sample's null is an absent field, which the row path leaves out of the series' columns
      // (a column here would order the series' record fields otherwise): the JSON path takes it.
      if (samples || bytes[at + 1] !== 0x75 || bytes[at + 2] !== 0x6c || bytes[at + 3] !== 0x6c) return -1;
      value = null;
      return at + 4;
    }
    packer ??= new JsonValuePacker(n, numbers);
    const end = packer.pack(bytes, at);
    if (end < 0) return -1;
    value = packer.taken as unknown as FieldValue;
    return end;
  };
  for (;;) {
    if ((entries.length & (STEP - 1)) === STEP - 1) yield;
    // `{"metric":"…"` then optionally `,"tags":{"k":"v",…}`, then `,"ts":[`.
    if (!at(bytes, i, METRIC)) return null;
    const keyStart = i + 1;
    keyHash = 0x811c9dc5;
    let j = stringEnd(i + METRIC.length);
    if (j < 0) return null;
    j++;
    if (at(bytes, j, TAGS)) {
      j += TAGS.length;
      if (bytes[j] === 0x7d) j++;
      else
        for (;;) {
          if (bytes[j] !== 0x22) return null;
          j = stringEnd(j + 1);
          if (j < 0 || bytes[j + 1] !== 0x3a || bytes[j + 2] !== 0x22) return null;
          j = stringEnd(j + 3);
          if (j < 0) return null;
          const c = bytes[j + 1];
          j += 2;
          if (c === 0x7d) break;
          if (c !== 0x2c) return null;
        }
    }
    if (!at(bytes, j, TS)) return null;
    const row = identities.of(bytes, keyStart, j, keyHash);
    if (row < 0) return null;
    const g = identities.current;
    const id = g.ids[row]!;
    const key = g.keys[row]!;
    const tagCount = g.tagCount[row]!;
    const longestTagValue = g.longest[row]!;
    const mark = g.mark[row]!;
    i = j + TS.length;
    // Timestamps: non-negative integers of at most 15 digits (exact), no leading zero; a sample's one bare.
    // Arrays made at their length (one sample, the scrape shape: a literal of one), not grown by push.
    if (!samples) {
      if (bytes[i] !== 0x5b) return null;
      i++;
    }
    let t = readTimestamp(bytes, i);
    if (t < 0) return null;
    i = result.end;
    const ts = [t];
    if (!samples) {
      while (bytes[i] === 0x2c) {
        t = readTimestamp(bytes, i + 1);
        if (t < 0) return null;
        ts.push(t);
        i = result.end;
      }
      if (bytes[i] !== 0x5d) return null;
      i++;
    }
    if (!at(bytes, i, FIELDS)) return null;
    i += FIELDS.length;
    const fields = new Columns();
    let names = 0;
    for (;;) {
      if (bytes[i] !== 0x22) return null;
      const end = stringEnd(i + 1);
      if (end < 0 || bytes[end + 1] !== 0x3a) return null;
      const name = fieldName(bytes, i + 1, end, names);
      // A name twice (JSON.parse keeps the last): the general path.
      if (name === null || fields[name] !== undefined) return null;
      i = end + 2;
      if (!samples) {
        if (bytes[i] !== 0x5b) return null;
        i++;
      }
      i = readValue(i);
      if (i < 0) return null;
      const col = [value];
      if (later >= 0) {
        laterCol.push(col);
        laterAt.push(0);
        laterIndex.push(later);
      }
      if (!samples) {
        while (bytes[i] === 0x2c) {
          i = readValue(i + 1);
          if (i < 0) return null;
          if (later >= 0) {
            laterCol.push(col);
            laterAt.push(col.length);
            laterIndex.push(later);
          }
          col.push(value);
        }
        if (bytes[i] !== 0x5d || col.length !== ts.length) return null;
        i++;
      }
      fields[name] = col;
      names++;
      const c = bytes[i];
      i++;
      if (c === 0x7d) break;
      if (c !== 0x2c) return null;
    }
    // The entry's closing brace, then `,` and the next entry or `]}` and the end of the body.
    if (bytes[i] !== 0x7d) return null;
    // (Made in readValue: flow analysis does not see that.)
    const made = packer as JsonValuePacker | null;
    entries.push({ id, key, ts, fields, tagCount, longestTagValue, mark, names, depth: made?.depth ?? 0 });
    if (made) made.depth = 0;
    // A batch of small rows is quicker through JSON.parse and the row path (an entry here is a map
    // and two arrays per sample: 1.8 against 1.27 us a sample for 100,000 rows of 200 series):
    // scanned are the few samples of single-sample writers, and records (an entry's map and arrays
    // are little beside JSON.parse's objects for a ~1.6 KB record and the encoder's walk over them).
    if (samples && entries.length > MAX_SAMPLES && i < entries.length * LARGE_ENTRY_BYTES) return null;
    const c = bytes[i + 1];
    if (ndjson) {
      // A sample a line, `\n` between them and optionally after the last (no blank line, no `\r`).
      if (i + 1 === n || (c === 0x0a && i + 2 === n)) break;
      if (c !== 0x0a) return null;
      i += 2;
      continue;
    }
    if (c === 0x2c) {
      i += 2;
      continue;
    }
    if (c === 0x5d && bytes[i + 2] === 0x7d && i + 3 === n) break;
    return null;
  }
  if (numbers.count > 0) {
    const values = numbers.values();
    for (let k = 0; k < laterCol.length; k++) laterCol[k]![laterAt[k]!] = values[laterIndex[k]!]!;
    if (packer && !(packer as JsonValuePacker).finish(values)) return null;
  }
  return new ScannedWrite(bytes, entries, samples, identities.rotations === rotations, ndjson);
}

const result = { value: 0, end: 0 };

/** A timestamp at `i` (see the scan), its end in `result.end`; -1 when the text there is not one. */
function readTimestamp(bytes: Uint8Array, i: number): number {
  const start = i;
  let v = 0;
  let c = bytes[i]!;
  while (c >= 0x30 && c <= 0x39) {
    v = v * 10 + (c - 0x30);
    c = bytes[++i]!;
  }
  const digits = i - start;
  if (digits === 0 || digits > 15 || (digits > 1 && bytes[start] === 0x30)) return -1;
  result.end = i;
  return v;
}

/** Names of a write's members, as MessagePack string bytes are compared with them. */
const MP_SERIES = ascii('series');
const MP_METRIC = ascii('metric');
const MP_TAGS = ascii('tags');
const MP_TS = ascii('ts');
const MP_FIELDS = ascii('fields');

/** The end of the string at bytes[i] (any header form) when it is `name`, else -1. */
function memberAt(bytes: Uint8Array, i: number, name: Uint8Array): number {
  if (readMsgpackStringHeader(bytes, i) !== name.length || !at(bytes, mpRead.end, name)) return -1;
  return mpRead.end + name.length;
}

/**
 * The end of a string at bytes[i] that can stand in a key text (printable ASCII without `"` or `\`,
 * so that its JSON text is its bytes in quotes), its bytes from `mpRead.end`; -1 otherwise.
 */
function keyString(bytes: Uint8Array, i: number): number {
  const len = readMsgpackStringHeader(bytes, i);
  const start = mpRead.end;
  if (len < 0 || start + len > bytes.length) return -1;
  for (let k = start; k < start + len; k++) {
    const c = bytes[k]!;
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
  }
  return start + len;
}

/**
 * The key text of an entry from its map's header at bytes[i] (a map of four, then `metric`, its
 * string, `tags` and its map of key strings): its end, or -1. With `text`, the JSON key text it
 * stands for is pushed there in pieces.
 */
function keyTextAt(bytes: Uint8Array, i: number, text?: string[]): number {
  if (readMsgpackContainer(bytes, i, true) !== 4) return -1;
  i = memberAt(bytes, mpRead.end, MP_METRIC);
  if (i < 0) return -1;
  const str = (): boolean => {
    const e = keyString(bytes, i);
    if (e < 0) return false;
    text?.push('"', latin1(bytes, mpRead.end, e), '"');
    i = e;
    return true;
  };
  text?.push('"metric":');
  if (!str()) return -1;
  i = memberAt(bytes, i, MP_TAGS);
  const tags = i < 0 ? -1 : readMsgpackContainer(bytes, i, true);
  if (tags < 0) return -1;
  i = mpRead.end;
  text?.push(',"tags":{');
  for (let k = 0; k < tags; k++) {
    text?.push(k > 0 ? ',' : '');
    if (!str()) return -1;
    text?.push(':');
    if (!str()) return -1;
  }
  text?.push('}');
  return i;
}

/**
 * The identity of a MessagePack key text the scanner delimited (keyTextAt): written as the JSON
 * key text it stands for and made as that one is, so a series written as MessagePack and as JSON
 * is one series.
 */
function identityOfMsgpack(bytes: Uint8Array, start: number, end: number): SeriesIdentity | null {
  const text: string[] = [];
  return keyTextAt(bytes, start, text) === end ? identityOfText(text.join('')) : null;
}

/**
 * A MessagePack write body as the SDK packs it, `{series: [{metric, tags, ts, fields}, …]}` (keys
 * in that order, headers of any length form), read straight from its bytes as scanSeriesSteps reads JSON: series recognised by
 * the bytes of their metric and tags (the same cache), timestamps and numbers read from their
 * bytes, any other value brought to the hot log's MessagePack by MsgpackValuePacker (no object of
 * it made). Null for anything else (another shape, a name the validator refuses, a value outside
 * the packer's subset): the body then takes msgpackr's decode and the general path, with its own
 * errors. What it reads is what msgpackr + plainColumns read (the property test in scan.spec.ts
 * holds them together).
 */
export function* scanMsgpackSteps(bytes: Uint8Array): Generator<void, ScannedWrite | null> {
  const rotations = identities.rotations;
  if (readMsgpackContainer(bytes, 0, true) !== 1) return null;
  let i = memberAt(bytes, mpRead.end, MP_SERIES);
  const count = i < 0 ? -1 : readMsgpackContainer(bytes, i, false);
  if (count < 0) return null;
  i = mpRead.end;
  const entries: ScannedEntry[] = [];
  let packer: MsgpackValuePacker | null = null;
  for (let e = 0; e < count; e++) {
    if ((e & (STEP - 1)) === STEP - 1) yield;
    const keyStart = i;
    i = keyTextAt(bytes, i);
    if (i < 0) return null;
    let h = 0x811c9dc5;
    for (let k = keyStart; k < i; k++) h = Math.imul(h ^ bytes[k]!, 0x01000193);
    const row = identities.of(bytes, keyStart, i, h, identityOfMsgpack);
    if (row < 0) return null;
    const g = identities.current;
    const id = g.ids[row]!;
    const key = g.keys[row]!;
    const tagCount = g.tagCount[row]!;
    const longestTagValue = g.longest[row]!;
    const mark = g.mark[row]!;
    // Timestamps: non-negative integers below 10^15 (15 digits, as the JSON scan takes them), -0 not.
    i = memberAt(bytes, i, MP_TS);
    const n = i < 0 ? -1 : readMsgpackContainer(bytes, i, false);
    if (n < 1) return null;
    i = mpRead.end;
    const ts = new Array<number>(n);
    for (let k = 0; k < n; k++) {
      i = readMsgpackNumber(bytes, i);
      const t = mpRead.value;
      if (i < 0 || !Number.isInteger(t) || t < 0 || t >= 1e15 || Object.is(t, -0)) return null;
      ts[k] = t;
    }
    i = memberAt(bytes, i, MP_FIELDS);
    const names = i < 0 ? -1 : readMsgpackContainer(bytes, i, true);
    if (names < 1) return null;
    i = mpRead.end;
    const fields = new Columns();
    for (let f = 0; f < names; f++) {
      const len = readMsgpackStringHeader(bytes, i);
      if (len < 0 || !printable(bytes, mpRead.end, len)) return null;
      const start = mpRead.end;
      const name = fieldName(bytes, start, start + len, f);
      if (name === null || fields[name] !== undefined) return null;
      if (readMsgpackContainer(bytes, start + len, false) !== n) return null;
      i = mpRead.end;
      const col = new Array<FieldValue>(n);
      for (let k = 0; k < n; k++) {
        const c = bytes[i];
        if (c === 0xc0) {
          col[k] = null;
          i++;
          continue;
        }
        const end = readMsgpackNumber(bytes, i);
        if (end >= 0) {
          col[k] = mpRead.value;
          i = end;
          continue;
        }
        packer ??= new MsgpackValuePacker(bytes.length);
        i = packer.pack(bytes, i);
        if (i < 0) return null;
        col[k] = packer.taken as unknown as FieldValue;
      }
      fields[name] = col;
    }
    entries.push({ id, key, ts, fields, tagCount, longestTagValue, mark, names, depth: packer?.depth ?? 0 });
    if (packer) packer.depth = 0;
  }
  if (i !== bytes.length) return null;
  return new ScannedWrite(bytes, entries, false, identities.rotations === rotations, false, true);
}
