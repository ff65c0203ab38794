import { MapKeys } from './map-keys.js';
import { ARR, MAP, PackedValue, STR, headBytes, numberBytes, readNumber, sizeOf, sizedKind } from './packed.js';
import { ByteArena, packLength, packNumber, packStrHeader, strHeaderBytes } from './records.js';

/**
 * MessagePack values of a write body (the SDK's default) brought to the bytes the record encoder
 * writes for the value msgpackr decodes from them (hot-log.md: msgpackr's rules for a JSON value):
 * numbers in their smallest form (a float64 holding 3 becomes 0x03, a float32 a float64), headers
 * in their shortest form, everything else copied. What is left to msgpackr and the validator (the
 * caller reads the body the general way): a string or key that is not printable ASCII, a key that
 * is integer-like (a JS object lists those first), `__proto__` or twice in one map, a non-finite
 * number, a 64-bit integer, binary and extension types, anything deeper than 64 levels or cut
 * short. The JSON body's counterpart is JsonValuePacker.
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
    const end = readMsgpackNumber(b, i);
    if (end >= 0) {
      this.ensure(9);
      this.pos = packNumber(this.buf, this.view, this.pos, mpRead.value);
      return end;
    }
    const kind = sizedKind(c);
    const n = kind === 0 ? -1 : readSize(b, i);
    if (n < 0) return -1;
    const at = mpRead.end;
    return kind === STR ? this.string(b, at, n) : kind === ARR ? this.array(b, at, n, depth) : this.map(b, at, n, depth);
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
      const start = mpRead.end;
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
export const mpRead = { value: 0, end: 0 };

/**
 * A finite number at b[i] as msgpackr decodes it (packed.ts readNumber: the types a JSON value
 * packs to, no 64-bit integer); its value in `mpRead.value`, and the index after it returned, or
 * -1 when b[i] is not such a number (or is cut short).
 */
export function readMsgpackNumber(b: Uint8Array, i: number): number {
  const c = b[i];
  const n = c === undefined ? 0 : numberBytes(c);
  if (n === 0 || i + n > b.length) return -1;
  const v = readNumber(b, i);
  if (v - v !== 0) return -1; // NaN, ±Infinity
  mpRead.value = v;
  return i + n;
}

/** The size (packed.ts sizeOf) of the string, array or map whose header is at b[i], its body from `mpRead.end`; -1 when the header is cut short. */
function readSize(b: Uint8Array, i: number): number {
  const head = headBytes(b[i]!);
  if (i + head > b.length) return -1;
  mpRead.end = i + head;
  return sizeOf(b, i);
}

/** The byte length of the string whose header is at b[i] (any form), its bytes from `mpRead.end`; -1 when b[i] starts no string. */
export function readMsgpackStringHeader(b: Uint8Array, i: number): number {
  const c = b[i];
  return c !== undefined && sizedKind(c) === STR ? readSize(b, i) : -1;
}

/** The entry count of the array (`map` false) or map header at b[i] (any form), the entries from `mpRead.end`; -1 otherwise. */
export function readMsgpackContainer(b: Uint8Array, i: number, map: boolean): number {
  const c = b[i];
  return c !== undefined && sizedKind(c) === (map ? MAP : ARR) ? readSize(b, i) : -1;
}
