import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { ByteReader, ByteWriter, setOwn } from './bytes.js';

const MAX = Number.MAX_SAFE_INTEGER;

describe('varints', () => {
  it('round-trip every safe integer, unsigned and signed, including the extremes', () => {
    const edges = [0, 1, 63, 64, 127, 128, 2 ** 30 - 1, 2 ** 30, 2 ** 31, 2 ** 32, 2 ** 52, MAX];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -MAX, max: MAX }), fc.constantFrom(...edges, ...edges.filter((e) => e > 0).map((e) => -e)))), (vs) => {
        const w = new ByteWriter(4);
        for (const v of vs) {
          w.svarint(v);
          w.uvarint(Math.abs(v));
        }
        const r = new ByteReader(w.finish(), 'test');
        for (const v of vs) {
          expect(r.svarint()).toBe(v);
          expect(r.uvarint()).toBe(Math.abs(v));
        }
        r.done();
      }),
    );
  });

  it('uses one byte for small magnitudes', () => {
    const w = new ByteWriter();
    w.svarint(-63);
    w.svarint(63);
    w.uvarint(127);
    expect(w.pos).toBe(3);
  });

  it('reports truncation and over-long varints as corruption', () => {
    expect(() => new ByteReader(new Uint8Array([0x80]), 't').uvarint()).toThrow(CorruptDataError);
    expect(() => new ByteReader(new Uint8Array(9).fill(0xff), 't').uvarint()).toThrow(/longer than 8 bytes|above 2\^53/);
    expect(() => new ByteReader(new Uint8Array(3), 't').u32()).toThrow(/truncated/);
    expect(() => new ByteReader(new Uint8Array([5, 1]), 't').count()).toThrow(/exceeds/);
  });
});

describe('strings', () => {
  it('round-trip unicode, empty and long strings', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 80 })), (ss) => {
        const w = new ByteWriter(1);
        for (const s of ss) w.str(s);
        const r = new ByteReader(w.finish(), 'test');
        for (const s of ss) expect(r.str()).toBe(s);
      }),
    );
  });

  it('rejects invalid UTF-8 as corruption', () => {
    expect(() => new ByteReader(new Uint8Array([2, 0xc3, 0x28]), 't').str()).toThrow(CorruptDataError);
  });
});

describe('u64 and f64', () => {
  it('round-trip', () => {
    const w = new ByteWriter(1);
    w.u64(MAX);
    w.f64(-0);
    const r = new ByteReader(w.finish(), 't');
    expect(r.u64()).toBe(MAX);
    expect(Object.is(r.f64(), -0)).toBe(true);
  });
});

it('setOwn stores __proto__ as data, not as the prototype', () => {
  const o: Record<string, number> = {};
  setOwn(o, '__proto__', 1);
  expect(Object.keys(o)).toEqual(['__proto__']);
  expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
});
