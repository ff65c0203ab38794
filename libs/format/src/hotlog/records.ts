import { LimitError, nameMap, own, type FieldValue, type SeriesColumns } from '@s4/core';
import { msgpack } from '../msgpack.js';
import { decodeRecordBytes, PackedValue } from './packed.js';

/**
 * The bytes of a hot-tier log (docs/format/hot-log.md): concatenated MessagePack values in arrival order, each either
 *   - a record `[ts, {field: value, ...}]` (absent fields left out), or
 *   - a batch `{"t": Float64Array, "f": {field: Float64Array | value[]}}` of several samples whose
 *     fields are all numbers (or absent): 16 bytes a sample instead of ~26, in the hot tier's
 *     memory (Redis/MemoryDB included) and on the write path.
 * MessagePack values delimit themselves, so appends need no framing and a log can be cut at any
 * value boundary. Within a log, a later sample wins over an earlier one with the same timestamp.
 *
 * Records are written by hand for the common shapes (timestamps as float64, numbers as int32 or
 * float64, short field names): the write path makes one record per sample, and a general
 * encoder call per sample costs more than the rest of ingest together. Any other value is
 * delegated to the pinned msgpackr instance, so every record is plain MessagePack.
 */
export type Fields = Record<string, FieldValue>;

/** Nesting that RecordEncoder writes itself; deeper values are packed by msgpackr (no deep recursion of its own). */
const VALUE_DEPTH = 64;
const utf8 = new TextEncoder();

/**
 * Bytes written one value after another and handed out as views (`mark` to `pos`, the value not yet
 * handed out): growing moves only those pending bytes, so views handed out keep their buffer, which
 * is never written again. The record encoder's and the JSON packer's buffer.
 */
export class ByteArena {
  protected view: DataView;
  protected pos = 0;
  /** Where the bytes not yet handed out start. */
  protected mark = 0;

  constructor(protected buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  protected ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const pending = this.pos - this.mark;
    const next = new Uint8Array(Math.max(this.buf.length * 2, pending + n));
    next.set(this.buf.subarray(this.mark, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
    this.pos = pending;
    this.mark = 0;
  }
}

export class RecordEncoder extends ByteArena {
  private readonly keys = new Map<string, Uint8Array>();

  constructor(private readonly maxRecordBytes: number) {
    // Small to start: a request's encoder lives for that request only, and a single-sample write
    // allocating (and zeroing) 64 KiB cost 8 µs of its ~100 µs; the buffer doubles as records need.
    // The first buffer is a slice of Node's shared pool (no allocation of its own, not zeroed: only
    // written bytes are ever handed out): a fresh 2 KiB ArrayBuffer was still ~3 % of a
    // single-sample write's CPU. Records taken are views of it, which the hot tiers copy.
    super(Buffer.allocUnsafe(2 * 1024));
  }

  private keyOf(name: string): Uint8Array {
    let k = this.keys.get(name);
    if (!k) this.keys.set(name, (k = new Uint8Array(msgpack.pack(name))));
    return k;
  }

  /** The MessagePack bytes of each field name, computed once per encoder. */
  keysOf(names: readonly string[]): Uint8Array[] {
    return names.map((name) => this.keyOf(name));
  }

  /** `record` for sample `i` of a map of columns (no arrays of names and keys built per series). */
  recordOf(ts: number, fields: Readonly<Record<string, readonly FieldValue[]>>, i: number, where: string): void {
    const start = this.pos - this.mark;
    // One walk over the fields (a for...in over a prototype-less map builds its key list each
    // time): the header's count, a fixmap's one byte, is filled in after them.
    this.header(ts, 0);
    const countAt = this.pos - 1 - this.mark;
    let present = 0;
    for (const f in fields) {
      const v = fields[f]![i];
      if (v !== null && v !== undefined) {
        this.field(this.keyOf(f), v);
        present++;
      }
    }
    if (present < 16) {
      // `field` may have moved the pending bytes to a new buffer: the count's place is relative to `mark`.
      this.buf[this.mark + countAt] = 0x80 | present;
      this.check(start, ts, where);
      return;
    }
    // 16 fields or more take a longer header: written again the two-pass way.
    this.pos = this.mark + start;
    this.recordOfWide(ts, fields, i, where, start);
  }

  private recordOfWide(ts: number, fields: Readonly<Record<string, readonly FieldValue[]>>, i: number, where: string, start: number): void {
    let present = 0;
    for (const f in fields) {
      const v = fields[f]![i];
      if (v !== null && v !== undefined) present++;
    }
    this.header(ts, present);
    for (const f in fields) {
      const v = fields[f]![i];
      if (v !== null && v !== undefined) this.field(this.keyOf(f), v);
    }
    this.check(start, ts, where);
  }

  /** Append the record of sample `i` of the columns; throws LimitError when it is too large. */
  record(ts: number, keys: readonly Uint8Array[], columns: readonly (readonly FieldValue[])[], i: number, where: string): void {
    const start = this.pos - this.mark;
    let present = 0;
    for (const col of columns) if (col[i] !== null && col[i] !== undefined) present++;
    this.header(ts, present);
    for (let c = 0; c < columns.length; c++) {
      const v = columns[c]![i];
      if (v !== null && v !== undefined) this.field(keys[c]!, v);
    }
    this.check(start, ts, where);
  }

  /** `[ts, {` with room for `present` fields. */
  private header(ts: number, present: number): void {
    this.ensure(16);
    const b = this.buf;
    b[this.pos++] = 0x92;
    b[this.pos++] = 0xcb;
    this.view.setFloat64(this.pos, ts);
    this.pos += 8;
    if (present < 16) b[this.pos++] = 0x80 | present;
    else {
      b[this.pos++] = 0xde;
      this.view.setUint16(this.pos, present);
      this.pos += 2;
    }
  }

  private field(k: Uint8Array, v: FieldValue): void {
    this.ensure(k.length + 9);
    const b = this.buf;
    let p = this.pos;
    for (let j = 0; j < k.length; j++) b[p++] = k[j]!;
    if (typeof v === 'number') {
      if (Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff && !(v === 0 && 1 / v < 0)) {
        b[p++] = 0xd2;
        this.view.setInt32(p, v);
        p += 4;
      } else {
        b[p++] = 0xcb;
        this.view.setFloat64(p, v);
        p += 8;
      }
      this.pos = p;
    } else if (v instanceof PackedValue) {
      // A value a write body's scan packed already (engine write/scan.ts): its bytes are the value's.
      this.pos = p;
      this.ensure(v.end - v.start);
      this.buf.set(v.bytes.subarray(v.start, v.end), this.pos);
      this.pos += v.end - v.start;
    } else {
      this.pos = p;
      this.value(v, 0);
    }
  }

  /**
   * A field's value as msgpackr packs it, byte for byte (its rules for the types of a JSON value),
   * written straight into the buffer: a msgpackr call per value, and its dispatch over every type
   * it knows, was a sixth of the HTTP thread's time on the records workload. Anything else (and
   * values nested deeper than VALUE_DEPTH) is packed by msgpackr.
   */
  private value(v: FieldValue, depth: number): void {
    switch (typeof v) {
      case 'number':
        this.number(v);
        return;
      case 'boolean':
        this.ensure(1);
        this.buf[this.pos++] = v ? 0xc3 : 0xc2;
        return;
      case 'string':
        this.string(v);
        return;
      case 'object': {
        if (v === null) {
          this.ensure(1);
          this.buf[this.pos++] = 0xc0;
          return;
        }
        if (depth >= VALUE_DEPTH) break;
        const ctor: unknown = v.constructor;
        if (ctor === Array) {
          const a = v as readonly FieldValue[];
          this.length(a.length, 0x90, 0xdc);
          for (let i = 0; i < a.length; i++) this.value(a[i]!, depth + 1);
          return;
        }
        if (ctor === Object) {
          const o = v as Readonly<Record<string, FieldValue>>;
          const keys = Object.keys(o);
          this.length(keys.length, 0x80, 0xde);
          for (const k of keys) {
            this.string(k);
            this.value(o[k]!, depth + 1);
          }
          return;
        }
        break;
      }
      default:
        break;
    }
    const packed = msgpack.pack(v);
    this.ensure(packed.length);
    this.buf.set(packed, this.pos);
    this.pos += packed.length;
  }

  /** An array's (`fix` 0x90, `x16` 0xdc) or a map's (0x80, 0xde) header. */
  private length(n: number, fix: number, x16: number): void {
    this.ensure(5);
    this.pos = packLength(this.buf, this.view, this.pos, n, fix, x16);
  }

  /** A nested number as msgpackr writes it (packNumber). */
  private number(v: number): void {
    this.ensure(9);
    this.pos = packNumber(this.buf, this.view, this.pos, v);
  }

  /**
   * A string as msgpackr writes it: short ones (under 64 UTF-16 units) by its own loop, a lone
   * surrogate as three bytes; longer ones as UTF-8 by the runtime (a lone surrogate as U+FFFD).
   * The header is sized from the length in units first, then moved up if the bytes need more.
   */
  private string(s: string): void {
    const n = s.length;
    const guess = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    this.ensure(guess + 3 * n + 5);
    const b = this.buf;
    const start = this.pos + guess;
    let length: number;
    if (n < 0x40) {
      let at = start;
      for (let i = 0; i < n; i++) {
        let c = s.charCodeAt(i);
        if (c < 0x80) b[at++] = c;
        else if (c < 0x800) {
          b[at++] = (c >> 6) | 0xc0;
          b[at++] = (c & 0x3f) | 0x80;
        } else if ((c & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c & 0x03ff) << 10) + (s.charCodeAt(++i) & 0x03ff);
          b[at++] = (c >> 18) | 0xf0;
          b[at++] = ((c >> 12) & 0x3f) | 0x80;
          b[at++] = ((c >> 6) & 0x3f) | 0x80;
          b[at++] = (c & 0x3f) | 0x80;
        } else {
          b[at++] = (c >> 12) | 0xe0;
          b[at++] = ((c >> 6) & 0x3f) | 0x80;
          b[at++] = (c & 0x3f) | 0x80;
        }
      }
      length = at - start;
    } else length = utf8.encodeInto(s, b.subarray(start)).written;
    const header = strHeaderBytes(length);
    if (header > guess) b.copyWithin(this.pos + header, start, start + length);
    packStrHeader(b, this.view, this.pos, length);
    this.pos += header + length;
  }

  private check(start: number, ts: number, where: string): void {
    // `start` counts from the mark, because `ensure` may move the pending bytes.
    const size = this.pos - this.mark - start;
    if (size > this.maxRecordBytes) throw new LimitError('S4_MAX_RECORD_BYTES', this.maxRecordBytes, `record of ${where} at ts ${ts} is ${size} bytes`, 413);
  }

  /**
   * Append samples `indexes` of the columns as one batch when every value is a number or absent
   * (their size is then bounded by construction); returns false, writing nothing, otherwise.
   */
  batch(ts: readonly number[], names: readonly string[], columns: readonly (readonly FieldValue[])[], indexes: readonly number[]): boolean {
    if (indexes.length < 2) return false;
    const f = nameMap<Float64Array | FieldValue[]>();
    for (let c = 0; c < columns.length; c++) {
      const col = columns[c]!;
      let dense = true;
      for (const i of indexes) {
        const v = col[i];
        if (typeof v !== 'number') {
          if (v !== null && v !== undefined) return false;
          dense = false;
        }
      }
      f[names[c]!] = dense ? Float64Array.from(indexes, (i) => col[i] as number) : indexes.map((i) => col[i] ?? null);
    }
    const packed = msgpack.pack({ t: Float64Array.from(indexes, (i) => ts[i]!), f });
    this.ensure(packed.length);
    this.buf.set(packed, this.pos);
    this.pos += packed.length;
    return true;
  }

  /**
   * The records written since the last take: a view that stays as it is (the encoder never
   * writes those bytes again), so the appends of a request share one buffer instead of a copy each.
   */
  take(): Uint8Array {
    const out = this.buf.subarray(this.mark, this.pos);
    this.mark = this.pos;
    return out;
  }
}

/**
 * A number as msgpackr writes it (useRecords false): the smallest integer form up to 32 bits, else
 * float64 (-0 as 0, as msgpackr does). At b[p]; returns the end. Nested values use it; a field's own
 * number is written as int32 or float64 by `field`.
 */
export function packNumber(b: Uint8Array, view: DataView, p: number, v: number): number {
  if (v >>> 0 === v) {
    if (v < 0x80) b[p++] = v;
    else if (v < 0x100) {
      b[p++] = 0xcc;
      b[p++] = v;
    } else if (v < 0x10000) {
      b[p++] = 0xcd;
      b[p++] = v >> 8;
      b[p++] = v & 0xff;
    } else {
      b[p++] = 0xce;
      view.setUint32(p, v);
      p += 4;
    }
  } else if (v >> 0 === v) {
    if (v >= -0x20) b[p++] = 0x100 + v;
    else if (v >= -0x80) {
      b[p++] = 0xd0;
      b[p++] = v + 0x100;
    } else if (v >= -0x8000) {
      b[p++] = 0xd1;
      view.setInt16(p, v);
      p += 2;
    } else {
      b[p++] = 0xd2;
      view.setInt32(p, v);
      p += 4;
    }
  } else {
    b[p++] = 0xcb;
    view.setFloat64(p, v);
    p += 8;
  }
  return p;
}

/** An array's (`fix` 0x90, `x16` 0xdc) or a map's (0x80, 0xde) header of `n` entries at b[p], the 32-bit form after the 16-bit one; returns the end. */
export function packLength(b: Uint8Array, view: DataView, p: number, n: number, fix: number, x16: number): number {
  if (n < 0x10) b[p++] = fix | n;
  else if (n < 0x10000) {
    b[p++] = x16;
    b[p++] = n >> 8;
    b[p++] = n & 0xff;
  } else {
    b[p++] = x16 + 1;
    view.setUint32(p, n);
    p += 4;
  }
  return p;
}

/** Bytes of the header msgpackr gives a string of `length` UTF-8 bytes. */
export function strHeaderBytes(length: number): number {
  return length < 0x20 ? 1 : length < 0x100 ? 2 : length < 0x10000 ? 3 : 5;
}

/** That header at b[p] (strHeaderBytes(length) bytes). */
export function packStrHeader(b: Uint8Array, view: DataView, p: number, length: number): void {
  if (length < 0x20) b[p] = 0xa0 | length;
  else if (length < 0x100) {
    b[p] = 0xd9;
    b[p + 1] = length;
  } else if (length < 0x10000) {
    b[p] = 0xda;
    b[p + 1] = length >> 8;
    b[p + 2] = length & 0xff;
  } else {
    b[p] = 0xdb;
    view.setUint32(p + 1, length);
  }
}

/** A log as columns in arrival order (not sorted, duplicates kept); null where a sample lacks a field. */
export function decodeRecords(data: Uint8Array): SeriesColumns {
  return decodeRecordBytes(data, false) ?? decodeRecordsGeneric(data);
}

/**
 * decodeRecords for a flush, whose columns go only to encodeSegment: nested values may be
 * PackedValues (decodeRecordBytes), which the segment encoder shreds from their bytes.
 */
export function decodeRecordsToEncode(data: Uint8Array): SeriesColumns {
  return decodeRecordBytes(data, true) ?? decodeRecordsGeneric(data);
}

/** decodeRecords by msgpackr, for every log (decodeRecordBytes reads the common ones faster). */
export function decodeRecordsGeneric(data: Uint8Array): SeriesColumns {
  const out: SeriesColumns = { ts: [], fields: nameMap() };
  if (data.length === 0) return out;
  const values = msgpack.unpackMultiple(Buffer.from(data.buffer, data.byteOffset, data.byteLength)) as ([number, Fields] | Batch)[];
  for (const v of values) {
    const n = out.ts.length;
    if (Array.isArray(v)) {
      out.ts.push(v[0]);
      for (const [f, x] of Object.entries(v[1])) column(out, f, n).push(x);
    } else {
      for (let i = 0; i < v.t.length; i++) out.ts.push(v.t[i]!);
      for (const [f, xs] of Object.entries(v.f)) {
        const col = column(out, f, n);
        for (let i = 0; i < xs.length; i++) col.push(xs[i]!);
      }
    }
    for (const col of Object.values(out.fields)) while (col.length < out.ts.length) col.push(null);
  }
  return out;
}

interface Batch {
  t: ArrayLike<number>;
  f: Record<string, ArrayLike<FieldValue>>;
}

function column(out: SeriesColumns, field: string, n: number): FieldValue[] {
  let col = own(out.fields, field);
  if (!col) out.fields[field] = col = new Array<FieldValue>(n).fill(null);
  return col;
}
