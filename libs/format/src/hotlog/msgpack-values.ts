import { MapKeys } from './map-keys.js';
import { PackedValue } from './packed.js';
import { ByteArena, packLength, packNumber, packStrHeader, strHeaderBytes } from './records.js';

/**
 * MessagePack values of a write body (the SDK's default) brought to the bytes the record encoder
 * writes for the value msgpackr decodes from them (hot-log.md: msgpackr's rules for a JSON value):
 * numbers in their smallest form (a float64 holding 3 becomes 0x03, a float32 a float64), headers
 * in their shortest form, everything else copied. What is left to msgpackr and the validator (the
 * caller reads the body the general way): a string or key that is not printable ASCII, a key that
 * is integer-like (a JS object lists those first), `__proto__` or twice in one map, a non-finite
 * number, a 64-bit integer beyond 2^53, binary and extension types, anything deeper than 64 levels
 * or cut short. The JSON body's counterpart is JsonValuePacker.
 */
export class MsgpackValuePacker extends ByteArena {
  /** The keys of the maps being packed. */
  private readonly keys = new MapKeys();
  /** Levels of arrays and maps in the deepest value packed since the caller last set it to 0 (0: scalars only). */
  depth = 0;
  /** The value of the last `pack`. */
  taken: PackedValue | null = null;

  constructor(sizeHint: number) {
    super(new Uint8Array(Math.max(1024, Math.min(sizeHint, 1 << 20))));
  }

  /** Packs the value at bytes[i]; returns the index after it, or -1 (see the class). `taken` is its PackedValue. */
  pack(bytes: Uint8Array, i: number): number {
    this.pos = this.mark;
    this.keys.count = 0;
    const end = this.value(bytes, i, 0);
    if (end < 0) return -1;
    this.taken = new PackedValue(this.buf, this.mark, this.pos);
    this.mark = this.pos;
    return end;
  }

  private value(b: Uint8Array, i: number, depth: number): number {
    const c = b[i];
    if (c === undefined) return -1;
    if (c <= 0x7f || c >= 0xe0 || c === 0xc0 || c === 0xc2 || c === 0xc3) {
      // fixints, nil, false, true: as they are
      this.ensure(1);
      this.buf[this.pos++] = c;
      return i + 1;
    }
    if (c >= 0xa0 && c <= 0xbf) return this.string(b, i + 1, c & 0x1f);
    if (c >= 0x90 && c <= 0x9f) return this.array(b, i + 1, c & 0x0f, depth);
    if (c >= 0x80 && c <= 0x8f) return this.map(b, i + 1, c & 0x0f, depth);
    const end = readMsgpackNumber(b, i);
    if (end >= 0) {
      this.ensure(9);
      this.pos = packNumber(this.buf, this.view, this.pos, mpNumber.value);
      return end;
    }
    const n = readMsgpackLength(b, i);
    if (n < 0) return -1;
    const at = mpNumber.end;
    if (c === 0xd9 || c === 0xda || c === 0xdb) return this.string(b, at, n);
    if (c === 0xdc || c === 0xdd) return this.array(b, at, n, depth);
    if (c === 0xde || c === 0xdf) return this.map(b, at, n, depth);
    return -1;
  }

  /** A string of `len` bytes at b[start], printable ASCII, with msgpackr's header for its length. */
  private string(b: Uint8Array, start: number, len: number): number {
    if (!printable(b, start, len)) return -1;
    const header = strHeaderBytes(len);
    this.ensure(header + len);
    packStrHeader(this.buf, this.view, this.pos, len);
    let p = this.pos + header;
    const buf = this.buf;
    for (let k = start; k < start + len; k++) buf[p++] = b[k]!;
    this.pos = p;
    return start + len;
  }

  private array(b: Uint8Array, i: number, n: number, depth: number): number {
    if (depth >= VALUE_DEPTH) return -1;
    if (depth + 1 > this.depth) this.depth = depth + 1;
    this.ensure(5);
    this.pos = packLength(this.buf, this.view, this.pos, n, 0x90, 0xdc);
    for (let k = 0; k < n; k++) {
      i = this.value(b, i, depth + 1);
      if (i < 0) return -1;
    }
    return i;
  }

  private map(b: Uint8Array, i: number, n: number, depth: number): number {
    if (depth >= VALUE_DEPTH) return -1;
    if (depth + 1 > this.depth) this.depth = depth + 1;
    this.ensure(5);
    this.pos = packLength(this.buf, this.view, this.pos, n, 0x80, 0xde);
    const first = this.keys.count;
    for (let k = 0; k < n; k++) {
      const len = readMsgpackStringHeader(b, i);
      if (len < 0) return -1;
      const start = mpNumber.end;
      if (!this.keys.add(b, start, len, first)) return -1;
      i = this.string(b, start, len);
      if (i < 0) return -1;
      i = this.value(b, i, depth + 1);
      if (i < 0) return -1;
    }
    this.keys.count = first;
    return i;
  }
}

/** Levels of arrays and maps the packer takes (RecordEncoder writes this deep itself). */
const VALUE_DEPTH = 64;

/** Whether b[start, start + len) is within b and printable ASCII (0x20–0x7e): what msgpackr decodes byte for byte. */
export function printable(b: Uint8Array, start: number, len: number): boolean {
  if (start + len > b.length) return false;
  for (let k = start; k < start + len; k++) {
    const c = b[k]!;
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** What the readers below read: a number's value, or where a header ends. */
export const mpNumber = { value: 0, end: 0 };

/** A view of the body being read (made at its first multi-byte number; forgetMsgpackBody lets go of it). */
let viewOf: Uint8Array | null = null;
const NO_VIEW: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
let view: DataView<ArrayBufferLike> = NO_VIEW;

/** Lets go of the body readMsgpackNumber keeps a view of: a reader calls it once done with a body. */
export function forgetMsgpackBody(): void {
  viewOf = null;
  view = NO_VIEW;
}

/**
 * A finite number at b[i] as msgpackr decodes it (64-bit integers as numbers: only up to 2^53,
 * where that is exact); its value in `mpNumber.value`, and the index after it returned, or -1
 * when b[i] is not such a number (or is cut short).
 */
export function readMsgpackNumber(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === undefined) return -1;
  if (c <= 0x7f) {
    mpNumber.value = c;
    return i + 1;
  }
  if (c >= 0xe0) {
    mpNumber.value = c - 0x100;
    return i + 1;
  }
  if (c < 0xca || c > 0xd3) return -1;
  if (b !== viewOf) {
    view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    viewOf = b;
  }
  const p = i + 1;
  let v: number;
  let n: number;
  switch (c) {
    case 0xcb:
      n = 8;
      if (p + n > b.length) return -1;
      v = view.getFloat64(p);
      if (v - v !== 0) return -1; // NaN, ±Infinity
      break;
    case 0xca:
      n = 4;
      if (p + n > b.length) return -1;
      v = view.getFloat32(p);
      if (v - v !== 0) return -1;
      break;
    case 0xcc:
      n = 1;
      if (p + n > b.length) return -1;
      v = b[p]!;
      break;
    case 0xcd:
      n = 2;
      if (p + n > b.length) return -1;
      v = view.getUint16(p);
      break;
    case 0xce:
      n = 4;
      if (p + n > b.length) return -1;
      v = view.getUint32(p);
      break;
    case 0xd0:
      n = 1;
      if (p + n > b.length) return -1;
      v = view.getInt8(p);
      break;
    case 0xd1:
      n = 2;
      if (p + n > b.length) return -1;
      v = view.getInt16(p);
      break;
    case 0xd2:
      n = 4;
      if (p + n > b.length) return -1;
      v = view.getInt32(p);
      break;
    case 0xcf:
      n = 8;
      if (p + n > b.length) return -1;
      v = view.getUint32(p) * 0x1_0000_0000 + view.getUint32(p + 4);
      if (v > Number.MAX_SAFE_INTEGER) return -1;
      break;
    case 0xd3:
      n = 8;
      if (p + n > b.length) return -1;
      v = view.getInt32(p) * 0x1_0000_0000 + view.getUint32(p + 4);
      if (!Number.isSafeInteger(v)) return -1;
      break;
    default:
      return -1;
  }
  mpNumber.value = v;
  return p + n;
}

/**
 * The entry count (or byte length) of the str8/16/32, array16/32 or map16/32 header at b[i], its
 * end in `mpNumber.end`; -1 for any other byte, or a header cut short. The fix forms are the caller's.
 */
export function readMsgpackLength(b: Uint8Array, i: number): number {
  const c = b[i];
  const n = c === 0xd9 ? 1 : c === 0xda || c === 0xdc || c === 0xde ? 2 : c === 0xdb || c === 0xdd || c === 0xdf ? 4 : 0;
  if (n === 0 || i + 1 + n > b.length) return -1;
  let len = 0;
  for (let k = 1; k <= n; k++) len = len * 256 + b[i + k]!;
  mpNumber.end = i + 1 + n;
  return len;
}

/** The byte length of the string whose header is at b[i] (any form), its bytes from `mpNumber.end`; -1 when b[i] starts no string. */
export function readMsgpackStringHeader(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c !== undefined && c >= 0xa0 && c <= 0xbf) {
    mpNumber.end = i + 1;
    return c & 0x1f;
  }
  return c === 0xd9 || c === 0xda || c === 0xdb ? readMsgpackLength(b, i) : -1;
}

/** The entry count of the array (`map` false) or map header at b[i] (any form), the entries from `mpNumber.end`; -1 otherwise. */
export function readMsgpackContainer(b: Uint8Array, i: number, map: boolean): number {
  const c = b[i];
  if (c === undefined) return -1;
  const fix = map ? 0x80 : 0x90;
  if (c >= fix && c <= fix + 0x0f) {
    mpNumber.end = i + 1;
    return c & 0x0f;
  }
  return (map ? c === 0xde || c === 0xdf : c === 0xdc || c === 0xdd) ? readMsgpackLength(b, i) : -1;
}
