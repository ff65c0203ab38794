import { msgpack } from '@s4/format';

/**
 * MessagePack of a query chunk as pieces for the socket, with the large typed arrays of the
 * decoded block columns sent as they are (views, not copies). `msgpack.pack` copies every typed
 * array into its output buffer, which it regrows as the chunk gets bigger: for R4 (issue 11:
 * 43 MB of node columns per answer, ~9,300 typed arrays) that was a third of the server's CPU
 * per query, on memory touched for the first time.
 *
 * The values decode exactly as those of `msgpack.pack` (the pinned options of libs/format):
 * typed arrays as msgpackr's typed-array extension (0x74 and the same type codes), Buffers as
 * bin, plain objects as maps in key order, and every number but a fixint, and any other value,
 * written by `msgpack.pack` itself. Only header widths may differ (strings take the smallest
 * header their UTF-8 length allows), which no decoder sees.
 *
 * The views share the block's buffers until the socket has written them; decoded blocks and
 * their compact forms are never written to after they are cached (libs/format shred/nodes.ts).
 */
export class PieceWriter {
  /** Typed arrays at least this long go out as their own piece; shorter ones are copied. */
  static readonly VIEW_BYTES = 2048;
  #pieces: Buffer[] = [];
  #buf = Buffer.allocUnsafe(SCRATCH);
  #at = 0;
  #start = 0;

  /** Writes one value; take() hands out the pieces written so far. */
  value(v: unknown): void {
    switch (typeof v) {
      case 'string':
        return this.#string(v);
      case 'boolean':
        return this.#byte(v ? 0xc3 : 0xc2);
      case 'number':
        return this.#number(v);
      case 'object':
        if (v === null) return this.#byte(0xc0);
        if (Array.isArray(v)) return this.#array(v);
        if (ArrayBuffer.isView(v)) return this.#typed(v);
        if (isPlainObject(v)) return this.#map(v as Record<string, unknown>);
        return this.#embed(v);
      default:
        return this.#embed(v);
    }
  }

  /** The pieces written since the last take(), in order (Buffers, as the socket takes them). */
  take(): Buffer[] {
    this.#cut();
    const out = this.#pieces;
    this.#pieces = [];
    return out;
  }

  /** Integers as msgpackr writes them (useRecords: false); other numbers by msgpackr. */
  #number(v: number): void {
    this.#room(5);
    const buf = this.#buf;
    if (v >>> 0 === v) {
      if (v < 0x80) buf[this.#at++] = v;
      else if (v < 0x100) this.#u8(0xcc, v);
      else if (v < 0x10000) this.#u16(0xcd, v);
      else this.#u32(0xce, v);
    } else if (v >> 0 === v && v >= -0x20) buf[this.#at++] = 0x100 + v;
    else this.#embed(v);
  }

  #array(v: readonly unknown[]): void {
    const n = v.length;
    this.#room(5);
    if (n < 0x10) this.#buf[this.#at++] = 0x90 | n;
    else if (n < 0x10000) this.#u16(0xdc, n);
    else this.#u32(0xdd, n);
    for (let i = 0; i < n; i++) this.value(v[i]);
  }

  #map(v: Record<string, unknown>): void {
    const keys = Object.keys(v);
    const n = keys.length;
    this.#room(5);
    if (n < 0x10) this.#buf[this.#at++] = 0x80 | n;
    else if (n < 0x10000) this.#u16(0xde, n);
    else this.#u32(0xdf, n);
    for (const k of keys) {
      this.#string(k);
      this.value(v[k]);
    }
  }

  #string(s: string): void {
    // A lone surrogate has no UTF-8 form: msgpackr writes it its own way, so it writes the string.
    if (!s.isWellFormed()) return this.#embed(s);
    const max = s.length * 3;
    this.#room(5 + max);
    const buf = this.#buf;
    // Written after the longest header that may be needed, then moved down if a shorter one fits.
    const head = max < 0x20 ? 1 : max < 0x100 ? 2 : max < 0x10000 ? 3 : 5;
    const n = buf.write(s, this.#at + head);
    const need = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    if (need < head) buf.copyWithin(this.#at + need, this.#at + head, this.#at + head + n);
    if (need === 1) this.#byte(0xa0 | n);
    else if (need === 2) this.#u8(0xd9, n);
    else if (need === 3) this.#u16(0xda, n);
    else this.#u32(0xdb, n);
    this.#at += n;
  }

  #typed(v: ArrayBufferView): void {
    const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength); // a view
    const n = bytes.length;
    if (Buffer.isBuffer(v)) {
      // msgpackr writes a Buffer as bin
      this.#room(5);
      if (n < 0x100) this.#u8(0xc4, n);
      else if (n < 0x10000) this.#u16(0xc5, n);
      else this.#u32(0xc6, n);
    } else {
      const type = TYPE_CODES.get(v.constructor);
      if (type === undefined) return this.#embed(v);
      this.#room(8);
      const len = n + 1; // the type byte is part of the extension's data
      if (len < 0x100) this.#u8(0xc7, len);
      else if (len < 0x10000) this.#u16(0xc8, len);
      else this.#u32(0xc9, len);
      this.#buf[this.#at++] = 0x74;
      this.#buf[this.#at++] = type;
    }
    if (n >= PieceWriter.VIEW_BYTES) {
      this.#cut();
      this.#pieces.push(bytes);
    } else this.#bytes(bytes);
  }

  /** A value written by msgpackr itself (its bytes copied at once: its buffer is reused by the next pack). */
  #embed(v: unknown): void {
    this.#bytes(msgpack.pack(v));
  }

  #bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#at);
    this.#at += b.length;
  }

  #byte(b: number): void {
    this.#room(1);
    this.#buf[this.#at++] = b;
  }

  #u8(head: number, n: number): void {
    this.#buf[this.#at++] = head;
    this.#buf[this.#at++] = n;
  }

  #u16(head: number, n: number): void {
    this.#buf[this.#at++] = head;
    this.#buf.writeUInt16BE(n, this.#at);
    this.#at += 2;
  }

  #u32(head: number, n: number): void {
    this.#buf[this.#at++] = head;
    this.#buf.writeUInt32BE(n, this.#at);
    this.#at += 4;
  }

  /** Room for n more bytes in the scratch buffer (a new one when full: the old one's pieces are still to be written). */
  #room(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    this.#cut();
    this.#buf = Buffer.allocUnsafe(Math.max(SCRATCH, n));
    this.#at = this.#start = 0;
  }

  #cut(): void {
    if (this.#at > this.#start) this.#pieces.push(this.#buf.subarray(this.#start, this.#at));
    this.#start = this.#at;
  }
}

const SCRATCH = 64 * 1024;

/** msgpackr's type codes of the typed-array extension (its `typedArrays` list). */
const TYPE_CODES = new Map<unknown, number>(
  [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array].map((c, i) => [c, i]),
);

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
