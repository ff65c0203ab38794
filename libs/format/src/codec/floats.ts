import { ByteWriter, type ByteReader } from './bytes.js';
import { decodeDecimal, encodeDecimal } from './decimal.js';
import { decodeGorilla, encodeGorilla } from './gorilla.js';

export const FloatCodec = { Gorilla: 0, Decimal: 1, Decimal32: 2 } as const;
export type FloatCodec = (typeof FloatCodec)[keyof typeof FloatCodec];

export interface EncodedFloats {
  codec: FloatCodec;
  body: Uint8Array;
}

/**
 * Encodes with both codecs and keeps the smaller body. Sizes are compared before the block
 * compressor runs; decimal varints also compress better afterwards, so ties go to decimal.
 */
// Reused by every call: the bodies returned are copies.
const scratch = new ByteWriter(4096);

/**
 * `float32`: Decimal32 may be chosen (segment version 4 and later): values that are all float32s
 * whose decimals a plain decimal cannot hold (17 digits as doubles).
 */
export function encodeFloats(values: readonly number[], float32 = false): EncodedFloats {
  const dw = scratch.reset();
  let codec: FloatCodec = FloatCodec.Decimal;
  let decimal = encodeDecimal(values, dw) ? dw.written() : null;
  if (!decimal && float32 && encodeDecimal(values, dw.reset(), true)) {
    codec = FloatCodec.Decimal32;
    decimal = dw.written();
  }
  // At two bytes or less per value Gorilla could only win on near-constant data, where decimal's
  // zero deltas compress to almost nothing anyway; skipping it halves the encode time.
  if (decimal && decimal.length <= 2 * values.length) return { codec, body: decimal.slice() };
  const gorilla = encodeGorilla(values);
  if (decimal && decimal.length <= gorilla.length) return { codec, body: decimal.slice() };
  return { codec: FloatCodec.Gorilla, body: gorilla };
}

/** `n` values as a Float64Array (what shredded node columns keep). */
export function decodeFloat64s(codec: number, r: ByteReader, end: number, n: number): Float64Array {
  if (codec === FloatCodec.Decimal || codec === FloatCodec.Decimal32) return decodeDecimal(r, n, codec === FloatCodec.Decimal32);
  const out = decodeGorilla(r.buf, r.pos, end, n, r.what);
  r.pos = end;
  return out;
}

/** `n` values as an array (what whole field columns hold, nulls mixed in). */
export function decodeFloats(codec: number, r: ByteReader, end: number, n: number): number[] {
  const values = decodeFloat64s(codec, r, end, n);
  // A filled loop: Array.from goes through the iterator, several times slower (folds decode every block).
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = values[i]!;
  return out;
}
