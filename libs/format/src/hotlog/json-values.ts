import { MapKeys } from './map-keys.js';
import { PackedValue } from './packed.js';
import { ByteArena, packLength, packNumber, packStrHeader, strHeaderBytes } from './records.js';

/**
 * JSON values read from a write body's bytes straight into the MessagePack a hot log holds: the
 * bytes RecordEncoder writes for what JSON.parse makes of the same text, without making it. On the
 * records workload (~1.6 KB nested records) JSON.parse, the validator's walk over the objects and
 * the encoder's walk again were most of the HTTP thread's ~50 µs a record (docs/benchmarks.md).
 *
 * Only a plain subset is taken, the compact text JSON.stringify writes: no whitespace, ASCII
 * strings without a backslash (so no escape, nothing to check for well-formedness), keys that
 * JSON.parse keeps in their order (none integer-like: a JS object lists those first), no key twice
 * in an object (JSON.parse keeps the last, at the first's place), no `__proto__`, nesting under
 * VALUE_DEPTH. Anything else makes `pack` answer -1, and the caller reads the body by JSON.parse.
 */

/** 10^k for k ≤ 22: exact doubles, so an integer of at most 15 digits divided by one is the correctly rounded decimal. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** readJsonNumber's answer (one object, overwritten by each call). */
export const jsonNumber = { value: 0, start: 0, end: 0, exact: true };

/**
 * A JSON number at `i`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`. Null when the text there
 * is not such a number; else `jsonNumber`, holding where its text is and, when `exact`, its value
 * as JSON.parse reads it: an integer up to 2^53 over 10^k, k ≤ 22, is two exact doubles and their
 * quotient is correctly rounded. Any other (longer, or with an exponent: a double JSON.stringify
 * writes has up to 17 digits) is for the caller to read by JSON.parse, which agrees with itself on every
 * text of that grammar: a batch of them at a time (DeferredNumbers), as one text made per number
 * and read by Number() cost ~0.4 µs each, most of a record's scan.
 */
export function readJsonNumber(bytes: Uint8Array, i: number): typeof jsonNumber | null {
  const start = i;
  // Past the end reads undefined, which no comparison below takes.
  let c = bytes[i]!;
  const neg = c === 0x2d;
  if (neg) c = bytes[++i]!;
  if (!(c >= 0x30 && c <= 0x39)) return null;
  let m = 0;
  let digits = 0;
  const intStart = i;
  // `before`: m before its last digit (for the 17-digit case below).
  let before = 0;
  while (c >= 0x30 && c <= 0x39) {
    before = m;
    m = m * 10 + (c - 0x30);
    digits++;
    c = bytes[++i]!;
  }
  if (digits > 1 && bytes[intStart]! === 0x30) return null;
  let scale = 0;
  if (c === 0x2e) {
    c = bytes[++i]!;
    if (!(c >= 0x30 && c <= 0x39)) return null;
    while (c >= 0x30 && c <= 0x39) {
      before = m;
      m = m * 10 + (c - 0x30);
      digits++;
      scale++;
      c = bytes[++i]!;
    }
  }
  // Every digit was added exactly while the true m is below 2^53 (rounding is monotonic: a true m
  // of 2^53 or more never reads below it).
  let exact = m < 2 ** 53 && scale <= 22;
  let magnitude = exact ? m / POW10[scale]! : Number.NaN;
  if (c === 0x65 || c === 0x45) {
    exact = false;
    c = bytes[++i]!;
    if (c === 0x2b || c === 0x2d) c = bytes[++i]!;
    if (!(c >= 0x30 && c <= 0x39)) return null;
    while (c >= 0x30 && c <= 0x39) c = bytes[++i]!;
  } else if (!exact && scale <= 22 && before < 2 ** 53) {
    // One digit more than 2^53 holds (most of JSON.stringify's 17-digit doubles).
    magnitude = quotient(before, bytes[i - 1]! - 0x30, POW10[scale]!);
    exact = magnitude === magnitude;
  }
  jsonNumber.value = neg ? -magnitude : magnitude;
  jsonNumber.start = start;
  jsonNumber.end = i;
  jsonNumber.exact = exact;
  return jsonNumber;
}

const SPLIT = 134_217_729; // 2^27 + 1

/** a·b − p exactly, for p = fl(a·b) (Dekker's product: no fused multiply-add in JS). */
function productError(a: number, b: number, p: number): number {
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  return ah * bh - p + ah * bl + al * bh + al * bl;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const NEXT = new Float64Array(1);
const NEXT_WORDS = new Uint32Array(NEXT.buffer);
/** The 32-bit word of a double that holds the low bits of its mantissa, and the other. */
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = 1 - LO;

/** The double after positive finite x. */
function nextUp(x: number): number {
  NEXT[0] = x;
  if (NEXT_WORDS[LO] === 0xffffffff) {
    NEXT_WORDS[LO] = 0;
    NEXT_WORDS[HI]!++;
  } else NEXT_WORDS[LO]!++;
  return NEXT[0];
}

/** The double before positive finite x (not 0). */
function nextDown(x: number): number {
  NEXT[0] = x;
  if (NEXT_WORDS[LO] === 0) {
    NEXT_WORDS[LO] = 0xffffffff;
    NEXT_WORDS[HI]!--;
  } else NEXT_WORDS[LO]!--;
  return NEXT[0];
}

/**
 * (10·a + d) / p correctly rounded (round half to even, as JSON.parse), for an integer a < 2^53, a
 * digit d and p = 10^k, k ≤ 22; NaN when the quotient is too near a midpoint between two doubles
 * to tell here (the caller reads the text by JSON.parse then). The numerator, up to 57 bits, is
 * held exactly as two doubles; a candidate quotient is checked by the exact remainder
 * numerator − x·p against half of the gaps to its neighbours, and moved a double at a time.
 */
function quotient(a: number, d: number, p: number): number {
  const hi = a * 10;
  const lo = productError(a, 10, hi) + d; // small integers: exact
  let x = (hi + lo) / p;
  if (x === 0) return Number.NaN;
  for (let step = 0; step < 4; step++) {
    const h = x * p;
    // hi − h is exact (the two are within a factor of 2), the rest a few units: r is the remainder
    // to within 2^-40, and the bounds below are 2 or more apart from anything it can be mistaken for.
    const r = hi - h + (lo - productError(x, p, h));
    const above = ((nextUp(x) - x) / 2) * p;
    const below = ((x - nextDown(x)) / 2) * p;
    if (r > above + 1e-6) x = nextUp(x);
    else if (r < -below - 1e-6) x = nextDown(x);
    else if (r < above - 1e-6 && r > -below + 1e-6) return x;
    // Within 1e-6 of a midpoint: a tie, or too near one for this arithmetic.
    else return Number.NaN;
  }
  return Number.NaN;
}

/** Texts of JSON numbers read later, all at once: one JSON.parse of `[a,b,…]`. */
export class DeferredNumbers {
  // Made at the first number: a single-sample write has none.
  private text = Buffer.alloc(0);
  private used = 1;
  count = 0;

  /** Adds the number text bytes[start, end); its index in `values()`. */
  add(bytes: Uint8Array, start: number, end: number): number {
    const len = end - start;
    if (this.used + len + 2 > this.text.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.text.length * 2, this.used + len + 2, 4096));
      this.text.copy(bigger, 0, 0, this.used);
      this.text = bigger;
    }
    const t = this.text;
    let p = this.used;
    for (let k = start; k < end; k++) t[p++] = bytes[k]!;
    t[p++] = 0x2c;
    this.used = p;
    return this.count++;
  }

  /** The numbers added, in order. */
  values(): number[] {
    if (this.count === 0) return [];
    this.text[0] = 0x5b;
    this.text[this.used - 1] = 0x5d;
    return JSON.parse(this.text.toString('latin1', 0, this.used)) as number[];
  }
}


const F64 = new Float64Array(1);
const F64_BYTES = new Uint8Array(F64.buffer);

/** Levels of arrays and objects the packer takes (RecordEncoder writes this deep itself). */
const VALUE_DEPTH = 64;

/**
 * Packs JSON values of one write body into a shared arena; each `pack` that succeeds leaves a
 * PackedValue (`taken`) over it. Made per body: the values are views of its buffers, which the
 * record encoder copies.
 */
export class JsonValuePacker extends ByteArena {
  /** Start and length of each key of the objects being packed (for the duplicate check). */
  private readonly keys = new MapKeys();
  /** Levels of arrays and objects in the deepest value packed since the caller last set it to 0 (0: scalars only). */
  depth = 0;
  /** The value of the last `pack`. */
  taken: PackedValue | null = null;
  /** Numbers of the value being packed whose bytes wait for `finish`: pairs of (place from `mark`, index in `numbers`). */
  private readonly pending: number[] = [];
  /**
   * Numbers of the values taken whose bytes wait for `finish`: their place and index in `numbers`,
   * and the buffers they are in (`slotBufs[j]` from slot `slotFrom[j]` on: the buffer changes seldom).
   */
  private slotAt = new Int32Array(1024);
  private slotIndex = new Int32Array(1024);
  private slots = 0;
  private readonly slotBufs: Uint8Array[] = [];
  private readonly slotFrom: number[] = [];

  constructor(
    sizeHint: number,
    /** Where numbers that need JSON.parse go (shared with the caller's own such numbers). */
    private readonly numbers: DeferredNumbers,
  ) {
    super(new Uint8Array(Math.max(1024, Math.min(sizeHint, 1 << 20))));
  }

  /**
   * Packs the value at bytes[i] (not a number: the caller reads those); returns the index after it,
   * or -1 when it is not of the subset above. `taken` is its PackedValue.
   */
  pack(bytes: Uint8Array, i: number): number {
    this.pos = this.mark;
    this.keys.count = 0;
    this.pending.length = 0;
    const end = this.value(bytes, i, 0);
    if (end < 0) return -1;
    const pending = this.pending;
    if (pending.length > 0) {
      if (this.slotBufs[this.slotBufs.length - 1] !== this.buf) {
        this.slotBufs.push(this.buf);
        this.slotFrom.push(this.slots);
      }
      if (this.slots + pending.length > this.slotAt.length) {
        const size = 2 * (this.slots + pending.length);
        const at = new Int32Array(size);
        at.set(this.slotAt);
        this.slotAt = at;
        const index = new Int32Array(size);
        index.set(this.slotIndex);
        this.slotIndex = index;
      }
      for (let k = 0; k < pending.length; k += 2) {
        this.slotAt[this.slots] = this.mark + pending[k]!;
        this.slotIndex[this.slots++] = pending[k + 1]!;
      }
    }
    this.taken = new PackedValue(this.buf, this.mark, this.pos);
    this.mark = this.pos;
    return end;
  }

  /**
   * Writes the deferred numbers of every value taken, `values` being `numbers.values()`; false when
   * one of them packs as an integer (msgpackr's smallest form, not a float64: the caller reads the
   * body the general way; a text of 16 digits or an exponent naming an integer is rare).
   */
  finish(values: readonly number[]): boolean {
    for (let j = 0; j < this.slotBufs.length; j++) {
      const b = this.slotBufs[j]!;
      const last = j + 1 < this.slotFrom.length ? this.slotFrom[j + 1]! : this.slots;
      for (let k = this.slotFrom[j]!; k < last; k++) {
        const v = values[this.slotIndex[k]!]!;
        if (v >>> 0 === v || v >> 0 === v) return false;
        F64[0] = v;
        const at = this.slotAt[k]! + 1;
        // Big-endian, byte by byte.
        if (LITTLE_ENDIAN) for (let i = 0; i < 8; i++) b[at + i] = F64_BYTES[7 - i]!;
        else for (let i = 0; i < 8; i++) b[at + i] = F64_BYTES[i]!;
      }
    }
    return true;
  }

  private value(b: Uint8Array, i: number, depth: number): number {
    const c = b[i]!;
    // Numbers first: most of a record's values.
    if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
      const n = readJsonNumber(b, i);
      if (n === null) return -1;
      this.ensure(9);
      if (n.exact) this.pos = packNumber(this.buf, this.view, this.pos, n.value);
      else {
        // A float64 whose bytes `finish` writes (from `mark`: `ensure` may move the value being packed).
        this.pending.push(this.pos - this.mark, this.numbers.add(b, n.start, n.end));
        this.buf[this.pos] = 0xcb;
        this.pos += 9;
      }
      return n.end;
    }
    if (c === 0x7b || c === 0x5b) {
      if (depth >= VALUE_DEPTH) return -1;
      if (depth + 1 > this.depth) this.depth = depth + 1;
      return c === 0x7b ? this.object(b, i + 1, depth) : this.array(b, i + 1, depth);
    }
    if (c === 0x22) {
      const end = stringEnd(b, i + 1);
      if (end < 0) return -1;
      this.string(b, i + 1, end);
      return end + 1;
    }
    this.ensure(9);
    if (c === 0x74) {
      if (b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65) return -1;
      this.buf[this.pos++] = 0xc3;
      return i + 4;
    }
    if (c === 0x66) {
      if (b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) return -1;
      this.buf[this.pos++] = 0xc2;
      return i + 5;
    }
    if (c === 0x6e) {
      if (b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c) return -1;
      this.buf[this.pos++] = 0xc0;
      return i + 4;
    }
    return -1;
  }

  /** A string's bytes b[start, end) (plain ASCII) as msgpackr packs it. */
  private string(b: Uint8Array, start: number, end: number): void {
    const len = end - start;
    const header = strHeaderBytes(len);
    this.ensure(header + len);
    packStrHeader(this.buf, this.view, this.pos, len);
    this.pos += header;
    const buf = this.buf;
    let p = this.pos;
    for (let k = start; k < end; k++) buf[p++] = b[k]!;
    this.pos = p;
  }

  /** Elements from b[i] (after the `[`) to the `]`. */
  private array(b: Uint8Array, i: number, depth: number): number {
    this.ensure(1);
    // From `mark`: `ensure` may move the value being packed.
    const head = this.pos++ - this.mark;
    let n = 0;
    if (b[i] === 0x5d) i++;
    else
      for (;;) {
        i = this.value(b, i, depth + 1);
        if (i < 0) return -1;
        n++;
        const c = b[i++];
        if (c === 0x5d) break;
        if (c !== 0x2c) return -1;
      }
    this.header(head, n, 0x90, 0xdc);
    return i;
  }

  /** Members from b[i] (after the `{`) to the `}`. */
  private object(b: Uint8Array, i: number, depth: number): number {
    this.ensure(1);
    // From `mark`: `ensure` may move the value being packed.
    const head = this.pos++ - this.mark;
    const first = this.keys.count;
    let n = 0;
    if (b[i] === 0x7d) i++;
    else
      for (;;) {
        if (b[i] !== 0x22) return -1;
        const end = stringEnd(b, i + 1);
        if (end < 0 || b[end + 1] !== 0x3a || !this.keys.add(b, i + 1, end - i - 1, first)) return -1;
        this.string(b, i + 1, end);
        i = this.value(b, end + 2, depth + 1);
        if (i < 0) return -1;
        n++;
        const c = b[i++];
        if (c === 0x7d) break;
        if (c !== 0x2c) return -1;
      }
    this.keys.count = first;
    this.header(head, n, 0x80, 0xde);
    return i;
  }

  /** The header of `n` entries at `head` (from `mark`), where one byte was kept for it: a longer one moves the entries up. */
  private header(head: number, n: number, fix: number, x16: number): void {
    if (n < 0x10) {
      this.buf[this.mark + head] = fix | n;
      return;
    }
    const extra = n < 0x10000 ? 2 : 4;
    this.ensure(extra);
    const at = this.mark + head;
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    packLength(this.buf, this.view, at, n, fix, x16);
    this.pos += extra;
    // The entries' numbers waiting for `finish` moved up with them.
    const pending = this.pending;
    for (let k = 0; k < pending.length; k += 2) if (pending[k]! > head) pending[k]! += extra;
  }
}

/** The index of the closing quote of a plain string starting at `from` (printable ASCII, no backslash), or -1. */
function stringEnd(b: Uint8Array, from: number): number {
  for (let j = from; j < b.length; j++) {
    const c = b[j]!;
    if (c === 0x22) return j;
    if (c < 0x20 || c >= 0x7f || c === 0x5c) return -1;
  }
  return -1;
}
