import { nameMap, own, type FieldValue, type SeriesColumns } from '@s4/core';
import { msgpack } from '../msgpack.js';
import { isProto } from './map-keys.js';

/**
 * A record's nested field value (an array or a map) left as the MessagePack bytes of its hot log.
 * A flush reads nested values only to shred them into columns, and building each record's object
 * graph (msgpackr) and walking it again (the shredder) was most of the segment thread's CPU on the
 * records workload: shred.ts walks these bytes instead. Made only by decodeRecordBytes, for the
 * flusher; every other reader of a log gets plain values.
 */
export class PackedValue {
  constructor(
    readonly bytes: Uint8Array,
    readonly start: number,
    readonly end: number,
  ) {}

  /** The value as decodeRecords gives it. */
  unpack(): FieldValue {
    return msgpack.unpack(Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.start, this.end - this.start)) as FieldValue;
  }
}

/** Columns that may hold PackedValues are plain columns again: for the encodings that take values (a field stored whole). */
export function unpackedColumn(col: readonly FieldValue[]): readonly FieldValue[] {
  let packed = false;
  for (const v of col) if (v instanceof PackedValue) packed = true;
  return packed ? col.map((v) => (v instanceof PackedValue ? v.unpack() : v)) : col;
}

/** unpackedColumn of every field. */
export function unpackedColumns(fields: Readonly<Record<string, readonly FieldValue[]>>): Readonly<Record<string, readonly FieldValue[]>> {
  const out = nameMap<readonly FieldValue[]>();
  for (const name of Object.keys(fields)) out[name] = unpackedColumn(fields[name]!);
  return out;
}

const utf8 = new TextDecoder();

/** Strings of up to this many bytes are looked up in `recent` first. */
const RECENT_BYTES = 32;
const RECENT_SLOTS = 4096;
/** Recently read short strings by a hash of their bytes: the names and repeated values of records (a GPS record's ~40 keys, its firmware string). */
const recent = new Array<{ bytes: Uint8Array; s: string } | undefined>(RECENT_SLOTS);

/**
 * The string of `len` UTF-8 bytes at data[p], as msgpackr reads it (the bytes are well-formed: they
 * were packed from checked strings). A short one is the same string object as the last time these
 * bytes were read, where it is still in `recent`: a string built afresh for every key of every record
 * had to be hashed again by each Map lookup of the shredder (most of a flush's CPU on records).
 */
export function readString(data: Uint8Array, p: number, len: number): string {
  if (len > RECENT_BYTES) return utf8.decode(data.subarray(p, p + len));
  let h = len;
  for (let i = p; i < p + len; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  const slot = (h ^ (h >>> 15)) & (RECENT_SLOTS - 1);
  const hit = recent[slot];
  if (hit !== undefined && hit.bytes.length === len) {
    let same = true;
    for (let i = 0; i < len; i++) {
      if (hit.bytes[i] !== data[p + i]) {
        same = false;
        break;
      }
    }
    if (same) return hit.s;
  }
  const s = decodeShort(data, p, len);
  recent[slot] = { bytes: data.slice(p, p + len), s };
  return s;
}

function decodeShort(data: Uint8Array, p: number, len: number): string {
  if (len < 24) {
    let s = '';
    for (let i = p; i < p + len; i++) {
      const c = data[i]!;
      if (c >= 0x80) return utf8.decode(data.subarray(p, p + len));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return utf8.decode(data.subarray(p, p + len));
}

/** The kinds of MessagePack value that carry a size in their header: sizedKind's answers (0: none of them). */
export const STR = 1;
export const ARR = 2;
export const MAP = 3;

/** Whether the type byte `b` starts a string, an array or a map (STR, ARR, MAP), or 0. */
export function sizedKind(b: number): number {
  if ((b & 0xe0) === 0xa0 || (b >= 0xd9 && b <= 0xdb)) return STR;
  if ((b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd) return ARR;
  if ((b & 0xf0) === 0x80 || b === 0xde || b === 0xdf) return MAP;
  return 0;
}

/** Bytes of the header of the string, array or map whose type byte is `b`. */
export function headBytes(b: number): number {
  if (b < 0xd9) return 1;
  return b === 0xd9 ? 2 : b === 0xda || b === 0xdc || b === 0xde ? 3 : 5;
}

/** The byte length of the string, or the entries of the array or map, at data[p] (sizedKind not 0). */
export function sizeOf(data: Uint8Array, p: number): number {
  const b = data[p]!;
  if (b < 0xc0) return b & ((b & 0xe0) === 0xa0 ? 0x1f : 0x0f);
  if (b === 0xd9) return data[p + 1]!;
  if (b === 0xda || b === 0xdc || b === 0xde) return (data[p + 1]! << 8) | data[p + 2]!;
  return ((data[p + 1]! << 24) | (data[p + 2]! << 16) | (data[p + 3]! << 8) | data[p + 4]!) >>> 0;
}

/** Bytes of the scalar at data[p] that a JSON value packs to (nil, booleans, numbers up to 32 bits, float32/64), or 0 for any other type. */
export function scalarBytes(b: number): number {
  if (b < 0x80 || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) return 1;
  switch (b) {
    case 0xcc:
    case 0xd0:
      return 2;
    case 0xcd:
    case 0xd1:
      return 3;
    case 0xce:
    case 0xd2:
    case 0xca:
      return 5;
    case 0xcb:
      return 9;
    default:
      return 0;
  }
}

/**
 * The end of the value at data[p] when it holds only what a JSON value packs to (nil, booleans,
 * numbers, strings, arrays, maps with string keys other than `__proto__`), or -1 (anything else,
 * or bytes cut short): such a value is decoded by msgpackr instead.
 */
export function packedEnd(data: Uint8Array, p: number, end: number, depth = 0): number {
  if (p >= end || depth > 1000) return -1;
  const t = data[p]!;
  // float64 and the small ints first: most of a record's members (scalarBytes gives the same)
  if (t === 0xcb) return p + 9 <= end ? p + 9 : -1;
  const size = scalarBytes(t);
  if (size > 0) return p + size <= end ? p + size : -1;
  const kind = sizedKind(t);
  const head = headBytes(t);
  if (kind === 0 || p + head > end) return -1;
  const n = sizeOf(data, p);
  let q = p + head;
  if (kind === STR) return q + n <= end ? q + n : -1;
  for (let i = 0; i < n; i++) {
    if (kind === MAP) {
      if (q >= end) return -1;
      const k = data[q]!;
      let len: number;
      let at: number;
      if ((k & 0xe0) === 0xa0) {
        len = k & 0x1f;
        at = q + 1;
      } else {
        if (sizedKind(k) !== STR || q + headBytes(k) > end) return -1;
        len = sizeOf(data, q);
        at = q + headBytes(k);
      }
      if (at + len > end) return -1;
      if (len === 9 && isProto(data, at)) return -1;
      q = at + len;
    }
    q = packedEnd(data, q, end, depth + 1);
    if (q < 0) return -1;
  }
  return q;
}

/** Bytes of the number at data[p] (its type byte included): what scalarBytes gives, but 0 for nil and booleans. */
export function numberBytes(b: number): number {
  return b === 0xc0 || b === 0xc2 || b === 0xc3 ? 0 : scalarBytes(b);
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const f32 = new DataView(new ArrayBuffer(4));
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The number at data[p], of a type numberBytes accepts, as msgpackr reads it. */
export function readNumber(data: Uint8Array, p: number): number {
  const b = data[p]!;
  if (b < 0x80) return b;
  if (b >= 0xe0) return b - 0x100;
  switch (b) {
    case 0xcc:
      return data[p + 1]!;
    case 0xcd:
      return (data[p + 1]! << 8) | data[p + 2]!;
    case 0xce:
      return ((data[p + 1]! << 24) | (data[p + 2]! << 16) | (data[p + 3]! << 8) | data[p + 4]!) >>> 0;
    case 0xd0:
      return (data[p + 1]! << 24) >> 24;
    case 0xd1:
      return (((data[p + 1]! << 8) | data[p + 2]!) << 16) >> 16;
    case 0xd2:
      return (data[p + 1]! << 24) | (data[p + 2]! << 16) | (data[p + 3]! << 8) | data[p + 4]!;
    case 0xca:
      for (let i = 0; i < 4; i++) f32.setUint8(i, data[p + 1 + i]!);
      return f32.getFloat32(0);
    default:
      // 0xcb: big-endian float64, copied byte by byte so that NaN payloads and -0 stay exact.
      if (LITTLE_ENDIAN) for (let i = 0; i < 8; i++) f64Bytes[i] = data[p + 8 - i]!;
      else for (let i = 0; i < 8; i++) f64Bytes[i] = data[p + 1 + i]!;
      return f64[0]!;
  }
}

/**
 * A log of records `[ts, {field: value}]` read straight from its bytes: numbers, strings, booleans
 * and nil decoded, and each nested value (an array or a map) either left as a PackedValue over
 * `data` (`packNested`, for a flush) or refused. Returns null, having built nothing that is kept,
 * at anything else (a batch, another type, a nested value not packed, `__proto__`, a name twice
 * in a record), for msgpackr to read (decodeRecordsGeneric). The general path builds an array and
 * an object per record and walks them again: most of a flush's decoding at many series of a few
 * samples each.
 */
export function decodeRecordBytes(data: Uint8Array, packNested: boolean): SeriesColumns | null {
  const ts: number[] = [];
  const fields = nameMap<FieldValue[]>();
  const columns: FieldValue[][] = [];
  const end = data.length;
  let p = 0;
  let lastKey = '';
  let lastKeyAt = -1;
  let lastKeyLen = -1;
  while (p < end) {
    if (data[p] !== 0x92 || p + 1 >= end) return null;
    const tsize = numberBytes(data[p + 1]!);
    if (tsize === 0 || p + 1 + tsize > end) return null;
    const t = readNumber(data, p + 1);
    p += 1 + tsize;
    if (p >= end) return null;
    // Fixmaps and fixstr names (a metric's records) are read inline: this loop is most of a flush's decoding at many series.
    const h = data[p]!;
    let count: number;
    if ((h & 0xf0) === 0x80) {
      count = h & 0x0f;
      p++;
    } else {
      if (sizedKind(h) !== MAP || p + headBytes(h) > end) return null;
      count = sizeOf(data, p);
      p += headBytes(h);
    }
    const n = ts.length;
    ts.push(t);
    for (let k = 0; k < count; k++) {
      if (p >= end) return null;
      const kh = data[p]!;
      let len: number;
      let at: number;
      if ((kh & 0xe0) === 0xa0) {
        len = kh & 0x1f;
        at = p + 1;
      } else {
        if (sizedKind(kh) !== STR || p + headBytes(kh) > end) return null;
        len = sizeOf(data, p);
        at = p + headBytes(kh);
      }
      if (at + len > end) return null;
      // Names repeat record after record: compare the bytes with the last name before building a string.
      let name: string;
      if (len === lastKeyLen && sameBytes(data, lastKeyAt, at, len)) name = lastKey;
      else {
        name = readString(data, at, len);
        if (name === '__proto__') return null;
        lastKey = name;
        lastKeyLen = len;
      }
      lastKeyAt = at;
      p = at + len;
      if (p >= end) return null;
      const b = data[p]!;
      const size = scalarBytes(b);
      let v: FieldValue;
      if (size > 0) {
        if (p + size > end) return null;
        v = b === 0xc0 ? null : b === 0xc2 ? false : b === 0xc3 ? true : readNumber(data, p);
        p += size;
      } else {
        const kind = sizedKind(b);
        if (kind === STR) {
          const len = sizeOf(data, p);
          const at = p + headBytes(b);
          if (at + len > end) return null;
          v = readString(data, at, len);
          p = at + len;
        } else {
          if (!packNested || kind === 0) return null;
          const q = packedEnd(data, p, end);
          if (q < 0) return null;
          v = new PackedValue(data, p, q) as unknown as FieldValue;
          p = q;
        }
      }
      let col = own(fields, name);
      if (!col) {
        fields[name] = col = new Array<FieldValue>(n).fill(null);
        columns.push(col);
      } else if (col.length > n) return null; // a name twice in one record
      col.push(v);
    }
    for (const col of columns) if (col.length === n) col.push(null);
  }
  return { ts, fields };
}

function sameBytes(b: Uint8Array, x: number, y: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (b[x + i] !== b[y + i]) return false;
  return true;
}
