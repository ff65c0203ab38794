import { nameMap, own, type FieldValue, type SeriesColumns } from '@s4/core';
import { msgpack } from '../msgpack.js';

/**
 * A record's nested field value (an array or a map) left as the MessagePack bytes of its hot log.
 * A flush reads nested values only to shred them into columns, and building each record's object
 * graph (msgpackr) and walking it again (the shredder) was most of the segment thread's CPU on the
 * records workload: shred.ts walks these bytes instead. Made only by decodeRecordsPacked, for the
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

/** The string of `len` UTF-8 bytes at data[p], as msgpackr reads it (the bytes are well-formed: they were packed from checked strings). */
export function readString(data: Uint8Array, p: number, len: number): string {
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

/** Length of a string at data[p] and where its bytes start, or null when data[p] is not a string. */
export function stringAt(data: Uint8Array, p: number): { len: number; at: number } | null {
  const b = data[p]!;
  if ((b & 0xe0) === 0xa0) return { len: b & 0x1f, at: p + 1 };
  if (b === 0xd9) return { len: data[p + 1]!, at: p + 2 };
  if (b === 0xda) return { len: (data[p + 1]! << 8) | data[p + 2]!, at: p + 3 };
  if (b === 0xdb) return { len: ((data[p + 1]! << 24) | (data[p + 2]! << 16) | (data[p + 3]! << 8) | data[p + 4]!) >>> 0, at: p + 5 };
  return null;
}

/** Entries of the array or map at data[p] and where they start; null when data[p] is neither. */
export function containerAt(data: Uint8Array, p: number): { map: boolean; n: number; at: number } | null {
  const b = data[p]!;
  if ((b & 0xf0) === 0x90) return { map: false, n: b & 0x0f, at: p + 1 };
  if ((b & 0xf0) === 0x80) return { map: true, n: b & 0x0f, at: p + 1 };
  if (b === 0xdc || b === 0xde) return { map: b === 0xde, n: (data[p + 1]! << 8) | data[p + 2]!, at: p + 3 };
  if (b === 0xdd || b === 0xdf) return { map: b === 0xdf, n: ((data[p + 1]! << 24) | (data[p + 2]! << 16) | (data[p + 3]! << 8) | data[p + 4]!) >>> 0, at: p + 5 };
  return null;
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

const PROTO = [0x5f, 0x5f, 0x70, 0x72, 0x6f, 0x74, 0x6f, 0x5f, 0x5f]; // "__proto__"

/**
 * The end of the value at data[p] when it holds only what a JSON value packs to (nil, booleans,
 * numbers, strings, arrays, maps with string keys other than `__proto__`), or -1 (anything else,
 * or bytes cut short): such a value is decoded by msgpackr instead.
 */
export function packedEnd(data: Uint8Array, p: number, end: number, depth = 0): number {
  if (p >= end || depth > 1000) return -1;
  const size = scalarBytes(data[p]!);
  if (size > 0) return p + size <= end ? p + size : -1;
  const s = stringAt(data, p);
  if (s) return s.at + s.len <= end ? s.at + s.len : -1;
  const c = containerAt(data, p);
  if (!c) return -1;
  let q = c.at;
  for (let i = 0; i < c.n; i++) {
    if (c.map) {
      if (q >= end) return -1;
      const k = stringAt(data, q);
      if (!k || k.at + k.len > end) return -1;
      if (k.len === PROTO.length && PROTO.every((x, j) => data[k.at + j] === x)) return -1;
      q = k.at + k.len;
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
 * decodeRecords for a flush: the same columns, but each nested value (an array or a map) as a
 * PackedValue over `data` instead of a decoded value. Returns null at anything else than records
 * `[ts, {field: value}]` of JSON values (a batch, another type, `__proto__`, a name twice in a
 * record), for decodeRecords to read.
 */
export function decodeRecordsPacked(data: Uint8Array): SeriesColumns | null {
  const ts: number[] = [];
  const fields = nameMap<FieldValue[]>();
  const columns: FieldValue[][] = [];
  const end = data.length;
  let p = 0;
  while (p < end) {
    if (data[p] !== 0x92 || p + 1 >= end) return null;
    const tsize = numberBytes(data[p + 1]!);
    if (tsize === 0 || p + 1 + tsize > end) return null;
    const t = readNumber(data, p + 1);
    p += 1 + tsize;
    if (p >= end) return null;
    const head = containerAt(data, p);
    if (!head?.map) return null;
    p = head.at;
    const n = ts.length;
    ts.push(t);
    for (let k = 0; k < head.n; k++) {
      if (p >= end) return null;
      const key = stringAt(data, p);
      if (!key || key.at + key.len > end) return null;
      const name = readString(data, key.at, key.len);
      if (name === '__proto__') return null;
      p = key.at + key.len;
      if (p >= end) return null;
      const b = data[p]!;
      const size = scalarBytes(b);
      let v: FieldValue;
      if (size > 0) {
        if (p + size > end) return null;
        v = b === 0xc0 ? null : b === 0xc2 ? false : b === 0xc3 ? true : readNumber(data, p);
        p += size;
      } else {
        const s = stringAt(data, p);
        if (s) {
          if (s.at + s.len > end) return null;
          v = readString(data, s.at, s.len);
          p = s.at + s.len;
        } else {
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
