import { CorruptDataError } from '@s4/core';
import { BitReader, BitWriter } from './bits.js';

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

export function encodeGorilla(values: readonly number[]): Uint8Array {
  const w = new BitWriter();
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

export function decodeGorilla(bytes: Uint8Array, start: number, end: number, n: number, what: string): number[] {
  if (n === 0) return [];
  const out = new Array<number>(n);
  const r = new BitReader(bytes, what, start, end);
  let h = r.read(32);
  let l = r.read(32);
  u32[HI] = h;
  u32[LO] = l;
  out[0] = f64[0]!;
  let lead = 64;
  let trail = 64;
  for (let i = 1; i < n; i++) {
    if (r.read(1) === 0) {
      out[i] = f64[0]!;
      continue;
    }
    if (r.read(1) === 1) {
      lead = r.read(5);
      const sig = r.read(6) || 64;
      trail = 64 - lead - sig;
      if (trail < 0) throw new CorruptDataError(what, `gorilla window of ${sig} bits after ${lead} leading zeros`);
    } else if (lead === 64) {
      throw new CorruptDataError(what, 'gorilla reuses a window before defining one');
    }
    const width = 64 - lead - trail;
    const mh = width > 32 ? r.read(width - 32) : 0;
    const ml = r.read(width > 32 ? 32 : width);
    let xh: number;
    let xl: number;
    if (trail === 0) {
      xh = mh;
      xl = ml;
    } else if (trail < 32) {
      xh = (mh << trail) | (ml >>> (32 - trail));
      xl = ml << trail;
    } else {
      xh = ml << (trail - 32);
      xl = 0;
    }
    h = (h ^ xh) >>> 0;
    l = (l ^ xl) >>> 0;
    u32[HI] = h;
    u32[LO] = l;
    out[i] = f64[0]!;
  }
  if (r.remaining > 7) throw new CorruptDataError(what, `${r.remaining} unread bits after ${n} values`);
  return out;
}
