import type { ByteReader, ByteWriter } from './bytes.js';
import { putSvarint } from './bytes.js';

/**
 * Decimal-scaled integers: values such as 21.37 are stored as 2137 with scale k = 2, then
 * delta-encoded as signed varints, which a general compressor shrinks far better than XOR bits.
 * A value counts as decimal only if round(v·10^k) / 10^k gives back the identical double; NaN,
 * ±Infinity and -0 have no such integer and are kept aside as exceptions (index + raw float64).
 */
export const MAX_SCALE = 15;
/**
 * The largest scale the writer tries for float32 decimals (readers take any up to MAX_SCALE). A
 * float32 of seven or more decimals is noise more than a reading, whose mantissa deltas take as
 * many bytes as Gorilla's bits, and trying it was a tenth of a records flush's CPU.
 */
const MAX_SCALE32 = 6;
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k);
// Mantissas stay below 2^51 so that a delta between two of them is still an exact integer.
const MAX_MANTISSA = 2 ** 51;
const CHUNK = 1024;

const isException = (v: number) => v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0);

/**
 * The value a mantissa and scale stand for: M / 10^k, or for float32 data (`f32`) the float32
 * nearest to it. Sensors that sample in float32 send doubles such as 45.29999923706055 (the float32
 * nearest 45.3), which no decimal of a double holds exactly (17 digits), but which are
 * fround(453 / 10): stored as 453 at scale 1 (segment.md, encoding 7).
 */
const valueOf = (m: number, p: number, f32: boolean) => (f32 ? Math.fround(m / p) : m / p);

/** Smallest scale that represents every non-exception value exactly (as valueOf reads it back), or -1 if none does. */
export function decimalScale(values: readonly number[], f32 = false): number {
  const max = f32 ? MAX_SCALE32 : MAX_SCALE;
  let k = 0;
  let p = 1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (isException(v)) continue;
    // A value that is not a float32 has no float32 decimal at any scale.
    if (f32 && Math.fround(v) !== v) return -1;
    for (;;) {
      const m = Math.round(v * p);
      if (valueOf(m, p, f32) === v && m <= MAX_MANTISSA && m >= -MAX_MANTISSA) break;
      if (++k > max) return -1;
      p = POW10[k]!;
    }
  }
  return k;
}

/**
 * Writes the decimal body, or returns false (writing nothing useful) if the values do not fit.
 * `f32`: the values are float32s read back as valueOf says (encoding 7); the body is the same.
 */
export function encodeDecimal(values: readonly number[], w: ByteWriter, f32 = false): boolean {
  const k = decimalScale(values, f32);
  if (k < 0) return false;
  const p = POW10[k]!;
  const n = values.length;
  const exceptions: number[] = [];
  for (let i = 0; i < n; i++) if (isException(values[i]!)) exceptions.push(i);
  w.u8(k);
  w.uvarint(exceptions.length);
  let last = 0;
  for (const i of exceptions) {
    w.uvarint(i - last);
    w.f64(values[i]!);
    last = i;
  }
  let prev = 0;
  for (let c = 0; c < n; c += CHUNK) {
    const lim = Math.min(n, c + CHUNK);
    w.ensure((lim - c) * 8);
    const b = w.raw;
    let pos = w.pos;
    for (let i = c; i < lim; i++) {
      const v = values[i]!;
      const m = Math.round(v * p);
      // NaN fails the comparison, ±Infinity and -0 pass it: all three are exceptions, delta 0.
      if (valueOf(m, p, f32) !== v || m > MAX_MANTISSA || m < -MAX_MANTISSA || (v === 0 && 1 / v < 0)) {
        // A later, larger scale can break a value that fit a smaller one, exactly or in magnitude.
        if (!isException(v)) return false;
        b[pos++] = 0;
        continue;
      }
      const d = m - prev;
      if (d > -64 && d < 64) b[pos++] = d < 0 ? (-d << 1) | 1 : d << 1;
      else pos = putSvarint(b, pos, d);
      prev = m;
    }
    w.pos = pos;
  }
  return true;
}

export function decodeDecimal(r: ByteReader, n: number, f32 = false): Float64Array {
  const k = r.u8();
  if (k > MAX_SCALE) r.fail(`decimal scale ${k} above ${MAX_SCALE}`);
  const p = POW10[k]!;
  const nExc = r.count(9);
  const excIdx: number[] = [];
  const excVal: number[] = [];
  let idx = 0;
  for (let e = 0; e < nExc; e++) {
    idx += r.uvarint();
    if (idx >= n || (e > 0 && idx === excIdx[e - 1])) r.fail(`decimal exception index ${idx} out of order or range`);
    excIdx.push(idx);
    excVal.push(r.f64());
  }
  const out = new Float64Array(n);
  const b = r.buf;
  const end = r.end;
  let pos = r.pos;
  let m = 0;
  for (let i = 0; i < n; i++) {
    const x = pos < end ? b[pos]! : 0x80;
    if (x < 0x80) {
      m += x & 1 ? -(x >>> 1) : x >>> 1;
      pos++;
    } else {
      r.pos = pos;
      m += r.svarint();
      pos = r.pos;
    }
    out[i] = f32 ? Math.fround(m / p) : m / p;
  }
  r.pos = pos;
  if (m > MAX_MANTISSA || m < -MAX_MANTISSA) r.fail('decimal mantissa out of range');
  for (let e = 0; e < nExc; e++) out[excIdx[e]!] = excVal[e]!;
  return out;
}
