import type { ByteReader, ByteWriter } from './bytes.js';
import { putSvarint } from './bytes.js';

/**
 * Timestamp column. Mode 0: first value, then delta-of-deltas (the first delta is its own
 * delta-of-delta from 0), all signed varints: regular scrapes cost one byte per sample before
 * the block compressor, which removes most of that. Mode 1: raw float64, used when a timestamp
 * is so far from the epoch (|ts| > 2^50 ms, about year 37,000) that a delta-of-delta could
 * leave the exactly representable integers.
 */
export const TsMode = { DeltaOfDelta: 0, Raw: 1 } as const;

const DOD_LIMIT = 2 ** 50;
const CHUNK = 1024;
const MAX = Number.MAX_SAFE_INTEGER;

export function encodeTimestamps(ts: readonly number[], w: ByteWriter): void {
  const n = ts.length;
  for (let i = 0; i < n; i++) {
    const t = ts[i]!;
    if (t > DOD_LIMIT || t < -DOD_LIMIT) {
      w.u8(TsMode.Raw);
      for (let j = 0; j < n; j++) w.f64(ts[j]!);
      return;
    }
  }
  w.u8(TsMode.DeltaOfDelta);
  let prev = 0;
  let prevDelta = 0;
  for (let c = 0; c < n; c += CHUNK) {
    const lim = Math.min(n, c + CHUNK);
    w.ensure((lim - c) * 8);
    const b = w.raw;
    let p = w.pos;
    for (let i = c; i < lim; i++) {
      const t = ts[i]!;
      if (i === 0) {
        p = putSvarint(b, p, t);
      } else {
        const delta = t - prev;
        const dod = delta - prevDelta;
        if (dod > -64 && dod < 64) b[p++] = dod < 0 ? (-dod << 1) | 1 : dod << 1;
        else p = putSvarint(b, p, dod);
        prevDelta = delta;
      }
      prev = t;
    }
    w.pos = p;
  }
}

/** Decodes and re-checks the writer's invariant (strictly ascending safe integers) in one pass. */
export function decodeTimestamps(r: ByteReader, n: number): number[] {
  const mode = r.u8();
  // Preallocated and filled by index: several times faster than push() for day-long columns.
  const out = new Array<number>(n);
  if (mode === TsMode.Raw) {
    r.need(n * 8);
    let prev = -Infinity;
    for (let i = 0; i < n; i++) {
      const t = r.f64();
      if (!(t > prev) || !Number.isSafeInteger(t)) r.fail(`timestamp ${t} at index ${i} is not an ascending safe integer`);
      out[i] = t;
      prev = t;
    }
    return out;
  }
  if (mode !== TsMode.DeltaOfDelta) r.fail(`unknown timestamp mode ${mode}`);
  if (n === 0) return [];
  const b = r.buf;
  const end = r.end;
  let t = r.svarint();
  if (t > MAX || t < -MAX) r.fail(`timestamp ${t} is not a safe integer`);
  out[0] = t;
  let delta = 0;
  let p = r.pos;
  for (let i = 1; i < n; i++) {
    let dod: number;
    const x = p < end ? b[p]! : 0x80;
    if (x < 0x80) {
      dod = x & 1 ? -(x >>> 1) : x >>> 1;
      p++;
    } else {
      r.pos = p;
      dod = r.svarint();
      p = r.pos;
    }
    delta += dod;
    t += delta;
    if (delta <= 0 || t > MAX) r.fail(`timestamp ${t} at index ${i} is not an ascending safe integer`);
    out[i] = t;
  }
  r.pos = p;
  return out;
}
