import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { canon } from '../testing/exact-json.js';
import { column } from '../testing/arbitraries.js';
import { ByteReader, ByteWriter } from './bytes.js';
import { decodeColumn, Enc, encodeColumn, FLAG_PRESENCE } from './column.js';
import { decodeTimestamps, encodeTimestamps } from './timestamps.js';
import { timestamps } from '../testing/arbitraries.js';

function roundTrip(col: FieldValue[]) {
  const w = new ByteWriter(8);
  encodeColumn(w, 'f', col);
  const bytes = w.finish();
  const r = new ByteReader(bytes, 'test');
  const out = decodeColumn(r, col.length);
  r.done();
  return { enc: bytes[2], flags: bytes[3], out: out.values, size: bytes.length };
}

describe('field columns', () => {
  it.each<[string, FieldValue[], number, number]>([
    ['two-decimal numbers', [1.25, 1.5, null, 2], Enc.Decimal, FLAG_PRESENCE],
    ['raw doubles', [Math.PI, Math.E, Math.SQRT2], Enc.Gorilla, 0],
    ['booleans', [true, false, null, true], Enc.Bool, FLAG_PRESENCE],
    ['strings', ['a', '', '😀', 'a'], Enc.String, 0],
    ['nested JSON', [{ a: [1, 'x'] }, [null, true]], Enc.MsgPack, 0],
    ['mixed scalars', [1, 'one', true], Enc.MsgPack, 0],
    ['-0 in a mixed column', [-0, 'x'], Enc.Exact, 0],
    ['__proto__ key', [JSON.parse('{"__proto__":1}') as FieldValue], Enc.Exact, 0],
    ['only nulls', [null, null], Enc.Absent, 0],
  ])('%s', (_name, col, enc, flags) => {
    const got = roundTrip(col);
    expect([got.enc, got.flags]).toEqual([enc, flags]);
    expect(canon(got.out)).toBe(canon(col));
  });

  it('round-trips any column exactly', () => {
    fc.assert(
      fc.property(fc.nat({ max: 50 }).chain(column), (col) => {
        expect(canon(roundTrip(col).out)).toBe(canon(col));
      }),
      { numRuns: 1000 },
    );
  });

  it('stores repeated strings once', () => {
    const col = Array.from({ length: 1000 }, (_, i) => ['idle', 'busy', 'down'][i % 3]!);
    expect(roundTrip(col).size).toBeLessThan(1000 + 32);
  });

  it('refuses non-JSON values', () => {
    expect(() => encodeColumn(new ByteWriter(), 'f', [new Date(0) as unknown as FieldValue])).toThrow(/not a JSON value/);
    expect(() => encodeColumn(new ByteWriter(), 'f', [undefined as unknown as FieldValue, { a: undefined } as unknown as FieldValue])).toThrow(/undefined/);
  });
});

describe('timestamps', () => {
  it('round-trip sorted unique safe integers', () => {
    fc.assert(
      fc.property(timestamps(200), (ts) => {
        const w = new ByteWriter(8);
        encodeTimestamps(ts, w);
        const r = new ByteReader(w.finish(), 't');
        expect(decodeTimestamps(r, ts.length)).toEqual(ts);
        r.done();
      }),
      { numRuns: 500 },
    );
  });

  it('costs one byte per regular sample', () => {
    const ts = Array.from({ length: 3600 }, (_, i) => 1_763_784_000_000 + i * 1000 + (i % 2) * 10);
    const w = new ByteWriter();
    encodeTimestamps(ts, w);
    expect(w.pos).toBeLessThan(3600 + 16);
  });
});
