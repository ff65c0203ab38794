import { CorruptDataError } from '@s4/core';

/** `parts` one after the other in one array (a single part is returned as it is, not copied). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Growable little-endian byte buffer. Varints are LEB128; numbers above 2^31 take the arithmetic
 * path because JS bitwise operators truncate to 32 bits, and every safe integer must survive.
 */
export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  pos = 0;

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }

  /**
   * Empties the writer for reuse, for encoders that keep one across calls and copy out (finish)
   * what they wrote before they return: a flush of many small series made several writers a
   * series. Its buffer is kept unless it grew beyond `keep` bytes.
   */
  reset(keep = 64 * 1024): this {
    this.pos = 0;
    if (this.buf.length > keep) {
      this.buf = new Uint8Array(keep);
      this.view = new DataView(this.buf.buffer);
    }
    return this;
  }

  ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  /** Unsigned 64-bit little-endian from a safe integer. */
  u64(v: number): void {
    this.ensure(8);
    this.view.setUint32(this.pos, v % 0x1_0000_0000, true);
    this.view.setUint32(this.pos + 4, Math.floor(v / 0x1_0000_0000), true);
    this.pos += 8;
  }

  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  uvarint(v: number): void {
    this.ensure(8);
    this.pos = putUvarint(this.buf, this.pos, v);
  }

  /**
   * Signed varint in sign-magnitude form: the LEB128 of 2·|v| + sign. Unlike zigzag it never
   * needs an intermediate above 2^53, so every safe integer encodes exactly.
   */
  svarint(v: number): void {
    this.ensure(8);
    this.pos = putSvarint(this.buf, this.pos, v);
  }

  /** The backing buffer for hot loops that write in place: call ensure() first, then set pos. */
  get raw(): Uint8Array {
    return this.buf;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
  }

  /** uvarint byte length, then UTF-8. */
  str(s: string): void {
    const len = Buffer.byteLength(s, 'utf8');
    this.uvarint(len);
    this.ensure(len);
    if (len === s.length) {
      // ASCII: a byte loop beats the encoder's call overhead for the short names we store.
      const b = this.buf;
      for (let i = 0; i < len; i++) b[this.pos + i] = s.charCodeAt(i);
    } else {
      encoder.encodeInto(s, this.buf.subarray(this.pos, this.pos + len));
    }
    this.pos += len;
  }

  /** Overwrites a u32 written earlier, for lengths known only after the body. */
  patchU32(at: number, v: number): void {
    this.view.setUint32(at, v, true);
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** A view without copying; valid until the next write. */
  written(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** LEB128 of a non-negative safe integer at b[p]; returns the next position. Caller ensures 8 bytes. */
export function putUvarint(b: Uint8Array, p: number, v: number): number {
  if (v < 0x8000_0000) {
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p++] = v;
    return p;
  }
  while (v >= 0x80) {
    b[p++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  b[p++] = v;
  return p;
}

/** See ByteWriter.svarint. */
export function putSvarint(b: Uint8Array, p: number, v: number): number {
  const neg = v < 0 ? 1 : 0;
  const mag = neg ? -v : v;
  if (mag < 0x40) {
    b[p] = (mag << 1) | neg;
    return p + 1;
  }
  if (mag < 0x4000_0000) return putUvarint(b, p, mag * 2 + neg);
  b[p] = ((mag % 64) * 2) | neg | 0x80;
  return putUvarint(b, p + 1, Math.floor(mag / 64));
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Bounds-checked reader: any read past the end is corruption, never an out-of-range value. */
export class ByteReader {
  pos: number;
  readonly end: number;
  private dataView: DataView | undefined;

  constructor(
    readonly buf: Uint8Array,
    readonly what: string,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  // Made when first needed: a reader per small row (series index version 2) mostly reads varints.
  private get view(): DataView {
    return (this.dataView ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength));
  }

  fail(why: string): never {
    throw new CorruptDataError(this.what, why);
  }

  need(n: number): void {
    if (n < 0 || this.pos + n > this.end) this.fail(`truncated at byte ${this.pos} (needs ${n} more)`);
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u64(): number {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
    if (hi >= 0x20_0000) this.fail('64-bit value above 2^53');
    return hi * 0x1_0000_0000 + lo;
  }

  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  uvarint(): number {
    const b = this.buf;
    let p = this.pos;
    const end = this.end;
    if (p < end) {
      const b0 = b[p]!;
      if (b0 < 0x80) {
        this.pos = p + 1;
        return b0;
      }
    }
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      if (p >= end) this.fail(`truncated varint at byte ${p}`);
      const x = b[p++]!;
      v += (x & 0x7f) * mul;
      if (x < 0x80) {
        this.pos = p;
        if (v > Number.MAX_SAFE_INTEGER) this.fail('varint above 2^53');
        return v;
      }
      mul *= 0x80;
    }
    return this.fail(`varint longer than 8 bytes at byte ${this.pos}`);
  }

  svarint(): number {
    if (this.pos >= this.end) this.fail(`truncated varint at byte ${this.pos}`);
    const b0 = this.buf[this.pos]!;
    if (b0 < 0x80) {
      this.pos++;
      return b0 & 1 ? -(b0 >>> 1) : b0 >>> 1;
    }
    this.pos++;
    const mag = this.uvarint() * 64 + ((b0 >>> 1) & 0x3f);
    if (mag > Number.MAX_SAFE_INTEGER) this.fail('signed varint above 2^53');
    return b0 & 1 ? -mag : mag;
  }

  /** A count of things each taking at least `minBytes`; rejects counts the bytes cannot hold. */
  count(minBytes = 1): number {
    const n = this.uvarint();
    if (n * minBytes > this.remaining) this.fail(`count ${n} exceeds the remaining ${this.remaining} bytes`);
    return n;
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  str(): string {
    const len = this.uvarint();
    this.need(len);
    const b = this.buf;
    const start = this.pos;
    this.pos += len;
    if (len <= 32) {
      let ascii = '';
      for (let i = start; i < start + len; i++) {
        const c = b[i]!;
        if (c >= 0x80) return this.utf8(start, len);
        ascii += String.fromCharCode(c);
      }
      return ascii;
    }
    return this.utf8(start, len);
  }

  private utf8(start: number, len: number): string {
    try {
      return decoder.decode(this.buf.subarray(start, start + len));
    } catch {
      return this.fail(`invalid UTF-8 at byte ${start}`);
    }
  }

  /** The structure must use every byte it was given; trailing bytes mean a misparse. */
  done(): void {
    if (this.pos !== this.end) this.fail(`${this.end - this.pos} unexpected trailing bytes`);
  }
}

/** Sets an own property even for the key `__proto__`, which plain assignment would turn into a prototype change. */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
