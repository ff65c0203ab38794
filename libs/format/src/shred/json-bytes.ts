/**
 * JSON text written straight into UTF-8 bytes, handed out in pieces of about `piece` bytes: what
 * the server's JSON and NDJSON answers are written with. Building the answer as JS strings cost
 * more than formatting it (a cons-string per value, flattened and then encoded again as UTF-8,
 * and the garbage of all of them); bytes are written once, where they will be sent from.
 */
export class JsonBytes {
  private buf: Uint8Array;
  /** buf, for copying a kept double's text four bytes at a time (byte by byte was most of a hit's cost). */
  private view: DataView;
  private pos = 0;
  private readonly full: Uint8Array[] = [];

  constructor(private readonly piece = 256 * 1024) {
    this.buf = new Uint8Array(piece + SLACK);
    this.view = new DataView(this.buf.buffer);
  }

  /** Whether a piece is full: the writer's caller hands out take() before writing on. */
  get ready(): boolean {
    return this.full.length > 0 || this.pos >= this.piece;
  }

  /** The full pieces written so far (the bytes are the caller's from now on). */
  take(): Uint8Array[] {
    if (this.pos >= this.piece) this.cut(0);
    return this.full.splice(0);
  }

  /** Every byte written so far, the last piece however short. */
  end(): Uint8Array[] {
    if (this.pos > 0) this.cut(0);
    return this.full.splice(0);
  }

  /** Starts a new buffer with room for n bytes, the one written so far kept as a piece. */
  private cut(n: number): void {
    if (this.pos > 0) this.full.push(this.buf.subarray(0, this.pos));
    this.buf = new Uint8Array(Math.max(this.piece + SLACK, n));
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
  }

  private room(n: number): void {
    if (this.pos + n > this.buf.length) this.cut(n);
  }

  /** A string of ASCII characters only (JSON syntax, number texts). */
  ascii(s: string): void {
    const n = s.length;
    this.room(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Any string, as UTF-8 (JSON text as JSON.stringify writes it: escaped, lone surrogates included). */
  text(s: string): void {
    const n = s.length;
    this.room(n * 3);
    const b = this.buf;
    let p = this.pos;
    if (n > 64) {
      // A whole value's JSON (a series answered by merging): the native encoder is faster for long text.
      this.pos = p + encoder.encodeInto(s, b.subarray(p)).written;
      return;
    }
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.pos = p + encoder.encodeInto(i === 0 ? s : s.slice(i), b.subarray(p)).written;
        return;
      }
      b[p++] = c;
    }
    this.pos = p;
  }

  byte(c: number): void {
    this.room(1);
    this.buf[this.pos++] = c;
  }

  bytes(x: Uint8Array): void {
    this.range(x, 0, x.length);
  }

  /** x[from, to): a text written before (number texts formatted a column at a time). */
  range(x: Uint8Array, from: number, to: number): void {
    const n = to - from;
    this.room(n);
    // Short copies (keys, number texts) by a loop: set() of a subarray costs more than it saves below ~32 bytes.
    if (n > 32) this.buf.set(x.subarray(from, to), this.pos);
    else {
      const b = this.buf;
      const p = this.pos - from;
      for (let i = from; i < to; i++) b[p + i] = x[i]!;
    }
    this.pos += n;
  }

  /** A JSON string: JSON.stringify(s), without it where nothing needs escaping (the common case). */
  string(s: string): void {
    const n = s.length;
    this.room(n + 2);
    const b = this.buf;
    let p = this.pos;
    b[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      // Control characters, '"' and '\' are escaped; anything beyond ASCII goes as UTF-8 (lone surrogates escaped): JSON.stringify's way.
      if (c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x80) {
        this.text(JSON.stringify(s));
        return;
      }
      b[p++] = c;
    }
    b[p++] = 0x22;
    this.pos = p;
  }

  /** A number as JSON.stringify writes it (NaN and ±Infinity as null, −0 as 0). */
  number(v: number): void {
    one[0] = v;
    this.numberAt(one, 0);
  }

  /**
   * nums[i] as number() writes it. The value is read here rather than passed: a double handed to a
   * call that is not inlined (the writers' recursion) is boxed into a heap number first, an
   * allocation per value.
   */
  numberAt(nums: Float64Array, i: number): void {
    if (this.pos + MAX_TEXT > this.buf.length) this.cut(MAX_TEXT);
    const v = nums[i]!;
    const b = this.buf;
    let p = this.pos;
    if ((v | 0) === v) {
      // An int32 (or −0): its digits, without making a string.
      let x = v;
      if (x < 0) {
        b[p++] = 0x2d;
        x = -x;
      }
      this.pos = digits(b, p, x);
    } else if (v - v !== 0) {
      // NaN or ±Infinity
      b[p] = 0x6e;
      b[p + 1] = 0x75;
      b[p + 2] = 0x6c;
      b[p + 3] = 0x6c;
      this.pos = p + 4;
    } else if (v < SAFE && v > -SAFE && Math.floor(v) === v) {
      // A larger safe integer (a timestamp): two int32 halves of at most 9 digits each.
      let x = v;
      if (x < 0) {
        b[p++] = 0x2d;
        x = -x;
      }
      const high = Math.floor(x / 1e9);
      let low = x - high * 1e9;
      p = digits(b, p, high);
      for (let q = p + 8; q >= p; q--) {
        const next = (low / 10) | 0;
        b[q] = 0x30 + low - next * 10;
        low = next;
      }
      this.pos = p + 9;
    } else this.double(nums, i);
  }

  /**
   * A finite non-integer. Formatting a double is the dear part (~0.1–0.25 µs), and sensor values
   * repeat (satellite elevations, 0.1-step readings, the same float32 values across machines),
   * so texts are kept in a process-wide direct-mapped table keyed by the double's bits.
   */
  private double(nums: Float64Array, i: number): void {
    const v = nums[i]!;
    bits[0] = v;
    const lo = words[0]!;
    const hi = words[1]!;
    const at = (Math.imul(lo ^ Math.imul(hi, 0x85eb_ca77), 0x9e37_79b1) >>> (32 - TABLE_BITS)) * SLOT;
    const t = table;
    const len = t[at + LEN]!;
    const b = this.buf;
    const p = this.pos;
    if (len > 0 && t[at] === lo && t[at + 1] === hi) {
      t[at + USED] = 1;
      // Whole words: up to 3 bytes beyond the text, inside the MAX_TEXT bytes of room numberAt made.
      const view = this.view;
      for (let w = 0; w * 4 < len; w++) view.setInt32(p + w * 4, t[at + TEXT + w]!, LITTLE);
      this.pos = p + len;
      return;
    }
    this.pos = missedDouble(v, b, p, at, lo, hi);
  }
}

/**
 * A double not in the table: its text written at b[p] (the end returned), and kept in slot `at`
 * unless the slot's value was used since the last miss on it (second chance: values that never
 * repeat, positions, do not push out those that do). A function of its own so that `double`,
 * compiled while a dashboard's repeated values all hit, does not deoptimize at its first miss
 * (a query of new values: the misses' code had no type feedback yet).
 */
function missedDouble(v: number, b: Uint8Array, p: number, at: number, lo: number, hi: number): number {
  const s = String(v);
  const n = s.length;
  for (let i = 0; i < n; i++) b[p + i] = s.charCodeAt(i);
  const t = table;
  if (t[at + USED] === 1) t[at + USED] = 0;
  else {
    t[at] = lo;
    t[at + 1] = hi;
    t[at + LEN] = n;
    const text = (at + TEXT) * 4;
    for (let i = 0; i < n; i++) tableBytes[text + i] = b[p + i]!;
  }
  return p + n;
}

/** Writes the digits of a non-negative int32 (or 2^31) at b[p]; returns the end. */
function digits(b: Uint8Array, p: number, x: number): number {
  const n = x < 10 ? 1 : x < 100 ? 2 : x < 1000 ? 3 : x < 10_000 ? 4 : x < 100_000 ? 5 : x < 1_000_000 ? 6 : x < 10_000_000 ? 7 : x < 100_000_000 ? 8 : x < 1_000_000_000 ? 9 : 10;
  // Integer division rather than %, which V8 compiles to a call for a double.
  for (let q = p + n - 1; q >= p; q--) {
    const next = Math.floor(x / 10);
    b[q] = 0x30 + x - next * 10;
    x = next;
  }
  return p + n;
}

const SAFE = 2 ** 53;
/** Room left beyond a piece, so that most pieces are cut at a value's end rather than before it. */
const SLACK = 4096;
const encoder = new TextEncoder();

/** The longest text of a double ("-1.2345678901234567e-308" is 24). */
const MAX_TEXT = 32;
const TABLE_BITS = 16;
/**
 * The table's slots, one 64-byte cache line each: the double's two words, its text's length (0:
 * empty), the second-chance bit, then the text. One line per lookup rather than one per array (a
 * table of separate arrays missed the cache four times per value).
 */
const SLOT = 16;
const LEN = 2;
const USED = 3;
const TEXT = 4;
const table = new Int32Array((1 << TABLE_BITS) * SLOT);
// Its pages made resident now (4 MiB, ~2 ms): left to the first answers, a query of a few thousand
// new values took a page fault every few values (~3.5 ms of a 1 % tag query's JSON at 40,000 series).
table.fill(0);
const tableBytes = new Uint8Array(table.buffer);
/** Whether this platform's Int32Array is little-endian (tableWords is written as bytes, read as words). */
const LITTLE = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const bits = new Float64Array(1);
/** number()'s value, so that one path (numberAt) writes every number. */
const one = new Float64Array(1);
const words = new Int32Array(bits.buffer);
