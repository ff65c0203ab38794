import { CorruptDataError } from '@s4/core';
import { BitWriter } from './bits.js';

/**
 * Gorilla XOR float compression (Pelkonen et al., VLDB 2015, section 4.1.2). Works on the raw
 * IEEE-754 bits, so every value, NaN payloads and -0 included, round-trips exactly.
 * The 64-bit XOR is handled as two 32-bit halves because JS bitwise operators are 32-bit.
 */
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
// Index of the high word: Node runs little-endian everywhere today, but do not assume it.
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const LO = 1 - HI;

const ctz32 = (x: number) => 31 - Math.clz32(x & -x);

// Reused by every call (finish copies the bytes out): a 1 KB writer per column was a large share
// of a flush of many small series. Columns above SCRATCH_VALUES get a writer of their own, so that
// the kept one stays small.
const scratch = new BitWriter();
const SCRATCH_VALUES = 1024;

export function encodeGorilla(values: readonly number[]): Uint8Array {
  const w = values.length <= SCRATCH_VALUES ? scratch.reset() : new BitWriter(values.length * 2 + 64);
  const n = values.length;
  if (n === 0) return w.finish();
  f64[0] = values[0]!;
  let ph = u32[HI]!;
  let pl = u32[LO]!;
  w.write(ph, 32);
  w.write(pl, 32);
  // 64 means "no window yet", which forces the first non-zero XOR to describe its own window.
  let pLead = 64;
  let pTrail = 64;
  for (let i = 1; i < n; i++) {
    f64[0] = values[i]!;
    const h = u32[HI]!;
    const l = u32[LO]!;
    const xh = (h ^ ph) >>> 0;
    const xl = (l ^ pl) >>> 0;
    ph = h;
    pl = l;
    if (xh === 0 && xl === 0) {
      w.write(0, 1);
      continue;
    }
    let lead = xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
    const trail = xl !== 0 ? ctz32(xl) : 32 + ctz32(xh);
    if (lead > 31) lead = 31; // the field is 5 bits wide
    if (lead >= pLead && trail >= pTrail) {
      w.write(0b10, 2);
      writeShifted(w, xh, xl, pTrail, 64 - pLead - pTrail);
    } else {
      const sig = 64 - lead - trail;
      w.write(0b11, 2);
      w.write(lead, 5);
      w.write(sig & 63, 6); // 64 significant bits are written as 0
      writeShifted(w, xh, xl, trail, sig);
      pLead = lead;
      pTrail = trail;
    }
  }
  return w.finish();
}

function writeShifted(w: BitWriter, hi: number, lo: number, shift: number, width: number): void {
  let sh: number;
  let sl: number;
  if (shift === 0) {
    sh = hi;
    sl = lo;
  } else if (shift < 32) {
    sl = ((lo >>> shift) | (hi << (32 - shift))) >>> 0;
    sh = hi >>> shift;
  } else {
    sl = hi >>> (shift - 32);
    sh = 0;
  }
  if (width > 32) {
    w.write(sh, width - 32);
    w.write(sl, 32);
  } else {
    w.write(sl, width);
  }
}

/**
 * Decodes `n` values into a Float64Array (compact to cache, sent over the wire without a copy).
 * The stream is first read into big-endian 32-bit words, so a read of up to 32 bits is two loads,
 * and the bits of each value are written straight into the output's words: this loop is most of
 * the time of a bulk read of records.
 */
export function decodeGorilla(bytes: Uint8Array, start: number, end: number, n: number, what: string): Float64Array {
  const out = new Float64Array(n);
  if (n === 0) return out;
  const o32 = new Uint32Array(out.buffer);
  const len = end - start;
  // One spare word, so that a read at the last word's end never leaves the array.
  const words = new Uint32Array((len >>> 2) + 2);
  let j = 0;
  let p = start;
  for (; p + 4 <= end; p += 4) words[j++] = ((bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) | bytes[p + 3]!) >>> 0;
  if (p < end) {
    let w = 0;
    for (let q = 0; q < 4; q++) w = (w << 8) | (p + q < end ? bytes[p + q]! : 0);
    words[j] = w >>> 0;
  }
  const limit = len * 8;
  let bit = 0;
  /** The next `k` bits (1 ≤ k ≤ 32), most significant first; bounds are checked once per value. */
  const read = (k: number): number => {
    const w = bit >>> 5;
    const off = bit & 31;
    bit += k;
    const v = off === 0 ? words[w]! : ((words[w]! << off) | (words[w + 1]! >>> (32 - off))) >>> 0;
    return k === 32 ? v : v >>> (32 - k);
  };
  if (limit < 64) throw new CorruptDataError(what, 'bit stream truncated');
  let h = read(32);
  let l = read(32);
  o32[HI] = h;
  o32[LO] = l;
  let lead = 64;
  let trail = 64;
  let width = 0;
  for (let i = 1; i < n; i++) {
    // 0 = the same value, 10 = a change inside the previous window, 11 = a new window.
    if (read(1) === 0) {
      if (bit > limit) throw new CorruptDataError(what, 'bit stream truncated');
      o32[2 * i + HI] = h;
      o32[2 * i + LO] = l;
      continue;
    }
    if (read(1) === 1) {
      lead = read(5);
      width = read(6) || 64;
      trail = 64 - lead - width;
      if (trail < 0) throw new CorruptDataError(what, `gorilla window of ${width} bits after ${lead} leading zeros`);
    } else if (lead === 64) {
      throw new CorruptDataError(what, 'gorilla reuses a window before defining one');
    }
    let xh: number;
    let xl: number;
    if (width > 32) {
      const mh = read(width - 32);
      const ml = read(32);
      if (trail === 0) {
        xh = mh;
        xl = ml;
      } else {
        xh = (mh << trail) | (ml >>> (32 - trail));
        xl = ml << trail;
      }
    } else {
      const ml = read(width);
      if (trail === 0) {
        xh = 0;
        xl = ml;
      } else if (trail < 32) {
        xh = ml >>> (32 - trail);
        xl = ml << trail;
      } else {
        xh = ml << (trail - 32);
        xl = 0;
      }
    }
    if (bit > limit) throw new CorruptDataError(what, 'bit stream truncated');
    h = (h ^ xh) >>> 0;
    l = (l ^ xl) >>> 0;
    o32[2 * i + HI] = h;
    o32[2 * i + LO] = l;
  }
  if (limit - bit > 7) throw new CorruptDataError(what, `${limit - bit} unread bits after ${n} values`);
  return out;
}
