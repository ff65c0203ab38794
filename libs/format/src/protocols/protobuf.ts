/**
 * The few protobuf wire-format primitives the Prometheus messages need (protobuf.dev/programming-
 * guides/encoding): varints, 64-bit fixed doubles, length-delimited bytes and strings, and
 * skipping of fields a reader does not know (so newer senders stay readable). Every read is
 * bounds-checked and a malformed message is a ProtobufError, never an out-of-range read.
 */

export class ProtobufError extends Error {
  constructor(message: string) {
    super(`protobuf: ${message}`);
    this.name = 'ProtobufError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

export class PbReader {
  pos: number;
  private readonly view: DataView;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /** The next field's number and wire type. */
  tag(): [field: number, wire: number] {
    const t = this.varint();
    const field = Math.floor(t / 8);
    if (field === 0) throw new ProtobufError('field number 0');
    return [field, t & 7];
  }

  /** An unsigned varint of up to 53 bits exactly (larger ones lose low bits; only int64 needs them). */
  varint(): number {
    const { buf, end } = this;
    let result = 0;
    let mul = 1;
    for (let k = 0; k < 10; k++) {
      if (this.pos >= end) throw new ProtobufError('truncated varint');
      const b = buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new ProtobufError('varint longer than 10 bytes');
  }

  /** An int64 varint (two's complement for negatives) as a number. */
  int64(): number {
    const start = this.pos;
    const v = this.varint();
    if (this.pos - start < 10) return v;
    // Ten bytes: a negative number. Re-read exactly.
    let big = 0n;
    for (let k = 0; k < 10; k++) big |= BigInt(this.buf[start + k]! & 0x7f) << BigInt(7 * k);
    return Number(BigInt.asIntN(64, big));
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new ProtobufError('truncated double');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** The bounds of a length-delimited field's payload; the reader moves past it. */
  len(): [start: number, end: number] {
    const n = this.varint();
    const start = this.pos;
    if (start + n > this.end) throw new ProtobufError(`length ${n} runs past the end of the message`);
    this.pos = start + n;
    return [start, start + n];
  }

  sub(): PbReader {
    const [start, end] = this.len();
    return new PbReader(this.buf, start, end);
  }

  string(): string {
    const [start, end] = this.len();
    const { buf } = this;
    // Short ASCII strings (label names and values) are the common case and cheapest by hand.
    if (end - start <= 32) {
      let ascii = true;
      for (let k = start; k < end; k++) if (buf[k]! >= 0x80) ascii = false;
      if (ascii) {
        let s = '';
        for (let k = start; k < end; k++) s += String.fromCharCode(buf[k]!);
        return s;
      }
    }
    try {
      return utf8.decode(buf.subarray(start, end));
    } catch {
      throw new ProtobufError('a string field is not valid UTF-8');
    }
  }

  /** Packed repeated varints (or a single unpacked one). */
  varints(wire: number, into: number[]): void {
    if (wire === WIRE_VARINT) {
      into.push(this.varint());
      return;
    }
    if (wire !== WIRE_LEN) throw new ProtobufError(`wire type ${wire} where varints were expected`);
    const [start, end] = this.len();
    const inner = new PbReader(this.buf, start, end);
    while (inner.more()) into.push(inner.varint());
  }

  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        if (this.pos + 8 > this.end) throw new ProtobufError('truncated fixed64');
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.len();
        return;
      case WIRE_FIXED32:
        if (this.pos + 4 > this.end) throw new ProtobufError('truncated fixed32');
        this.pos += 4;
        return;
      default:
        throw new ProtobufError(`unsupported wire type ${wire}`);
    }
  }

  /** Throws unless the field has the wire type the schema says. */
  expect(field: number, wire: number, want: number): void {
    if (wire !== want) throw new ProtobufError(`field ${field} has wire type ${wire}, expected ${want}`);
  }
}

/** Appends protobuf fields to a growing buffer; nested messages are written by `message`. */
export class PbWriter {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  varint(v: number): this {
    this.ensure(10);
    if (v < 0) {
      // int64 negatives: ten bytes of two's complement.
      let big = BigInt.asUintN(64, BigInt(v));
      for (let k = 0; k < 10; k++) {
        const b = Number(big & 0x7fn);
        big >>= 7n;
        this.buf[this.pos++] = big > 0n ? b | 0x80 : b;
        if (big === 0n) break;
      }
      return this;
    }
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
    return this;
  }

  tag(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }

  uint(field: number, v: number): this {
    return this.tag(field, WIRE_VARINT).varint(v);
  }

  double(field: number, v: number): this {
    this.tag(field, WIRE_FIXED64);
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
    return this;
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, WIRE_LEN).varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, utf8Encoder.encode(s));
  }

  packed(field: number, values: readonly number[]): this {
    const inner = new PbWriter();
    for (const v of values) inner.varint(v);
    return this.bytes(field, inner.finish());
  }

  /** A nested message, written by `write` into its own writer. */
  message(field: number, write: (w: PbWriter) => void): this {
    const inner = new PbWriter();
    write(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}
