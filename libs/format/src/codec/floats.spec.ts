import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { ByteReader, ByteWriter } from './bytes.js';
import { decimalScale, decodeDecimal, encodeDecimal } from './decimal.js';
import { decodeFloats, encodeFloats, FloatCodec } from './floats.js';
import { decodeGorilla, encodeGorilla } from './gorilla.js';

const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.from(a).every((x, i) => Object.is(x, b[i]));
const SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53 - 1, 0.1 + 0.2];

describe('gorilla', () => {
  it('round-trips any doubles bit-exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double(), fc.constantFrom(...SPECIAL))), (vs) => {
        const b = encodeGorilla(vs);
        expect(same(decodeGorilla(b, 0, b.length, vs.length, 't'), vs)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('spends one bit on a repeated value', () => {
    expect(encodeGorilla(new Array<number>(800).fill(42.5)).length).toBe(8 + 100);
  });

  it('reports a short stream as corruption', () => {
    const b = encodeGorilla([1.5, 2.75, 3.125]);
    expect(() => decodeGorilla(b, 0, b.length - 1, 3, 't')).toThrow(CorruptDataError);
  });
});

describe('decimal', () => {
  it('finds the smallest exact scale', () => {
    expect(decimalScale([1, 2, -3])).toBe(0);
    expect(decimalScale([21.37, 0.5])).toBe(2);
    expect(decimalScale([0.001, 1e9])).toBe(3);
    expect(decimalScale([0.001, 1e15])).toBe(-1); // 1e18 exceeds the 2^51 mantissa bound
    expect(decimalScale([NaN, -0, Infinity, 1.5])).toBe(1);
    expect(decimalScale([0.1 + 0.2])).toBe(-1);
    expect(decimalScale([5e-324])).toBe(-1);
    expect(decimalScale([2 ** 53 - 1])).toBe(-1); // beyond the 2^51 mantissa bound
  });

  it('round-trips decimals with NaN, ±Infinity and -0 as exceptions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -1e9, max: 1e9 }).map((x) => x / 1000), fc.constantFrom(NaN, Infinity, -Infinity, -0))),
        (vs) => {
          const w = new ByteWriter();
          expect(encodeDecimal(vs, w)).toBe(true);
          const r = new ByteReader(w.finish(), 't');
          expect(same(decodeDecimal(r, vs.length), vs)).toBe(true);
          r.done();
        },
      ),
    );
  });

  it('declines values it cannot represent exactly', () => {
    expect(encodeDecimal([1, 0.1 + 0.2], new ByteWriter())).toBe(false);
  });
});

describe('float column choice', () => {
  const walk = Array.from({ length: 1000 }, (_, i) => Math.round(Math.sin(i / 10) * 10000) / 100);
  const noise = Array.from({ length: 1000 }, (_, i) => Math.sin(i * 7919.123) * 1e3);

  it('picks decimal for two-decimal data and gorilla for raw doubles', () => {
    expect(encodeFloats(walk).codec).toBe(FloatCodec.Decimal);
    expect(encodeFloats(noise).codec).toBe(FloatCodec.Gorilla);
  });

  it('round-trips whichever codec it picked', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double(), fc.integer().map((x) => x / 100), fc.constantFrom(...SPECIAL))), (vs) => {
        const { codec, body } = encodeFloats(vs);
        expect(same(decodeFloats(codec, new ByteReader(body, 't'), body.length, vs.length), vs)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('float32 decimals (Decimal32)', () => {
  const f32 = Math.fround;
  /** Float32 readings of `k` decimals, as a float32 sensor sends them (45.29999923706055 for 45.3). */
  const readings = (k: number) => fc.integer({ min: -5_000_000, max: 5_000_000 }).map((m) => f32(m / 10 ** k));

  it('finds the smallest scale at which fround(M / 10^k) gives each value back, and none for doubles', () => {
    expect(decimalScale([f32(45.3), f32(0.5), f32(-12.7)], true)).toBe(1);
    expect(decimalScale([f32(45.3)])).toBe(-1); // no plain decimal holds 45.29999923706055
    expect(decimalScale([f32(0.001), NaN, -0, -Infinity], true)).toBe(3);
    expect(decimalScale([0.1], true)).toBe(-1); // not a float32
    expect(decimalScale([f32(1e-20)], true)).toBe(-1); // beyond scale 15
    expect(decimalScale([f32(0.654321)], true)).toBe(6);
    expect(decimalScale([f32(0.1234567)], true)).toBe(-1); // the writer tries no more than 6 decimals of a float32
  });

  it('round-trips float32 readings bit-exactly, with NaN, ±Infinity and -0 as exceptions, and picks Decimal32 for them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }).chain((k) => fc.array(fc.oneof({ weight: 9, arbitrary: readings(k) }, { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity, -0) }), { minLength: 1 })), (vs) => {
        const w = new ByteWriter();
        expect(encodeDecimal(vs, w, true)).toBe(true);
        const r = new ByteReader(w.finish(), 't');
        expect(same(decodeDecimal(r, vs.length, true), vs)).toBe(true);
        r.done();
        const { codec, body } = encodeFloats(vs, true);
        expect(same(decodeFloats(codec, new ByteReader(body, 't'), body.length, vs.length), vs)).toBe(true);
      }),
      { numRuns: 500 },
    );
    const sats = Array.from({ length: 1000 }, (_, i) => f32(Math.round(450 + Math.sin(i / 50) * 300) / 10));
    expect(encodeFloats(sats).codec).toBe(FloatCodec.Gorilla);
    expect(encodeFloats(sats, true).codec).toBe(FloatCodec.Decimal32);
  });

  it('round-trips any doubles bit-exactly whichever codec it picks with float32 allowed', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double(), fc.double().map(f32), readings(2), fc.integer().map((x) => x / 100), fc.constantFrom(...SPECIAL))), (vs) => {
        const { codec, body } = encodeFloats(vs, true);
        expect(same(decodeFloats(codec, new ByteReader(body, 't'), body.length, vs.length), vs)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('decimal codec regression', () => {
  it('falls back when a larger scale found later pushes an earlier value past 2^51', async () => {
    const { encodeBlock, decodeBlock } = await import('../segment/block.js');
    // Found by the segment property test: 90071992544017 fits scale 0, but -3392.92 needs
    // scale 2, at which the first value's mantissa is above 2^51.
    const values = [90071992544017, -3392.92, 1.5];
    const out = decodeBlock(encodeBlock([1, 2, 3], { v: values }));
    expect(out.fields.v).toEqual(values);
  });
});
