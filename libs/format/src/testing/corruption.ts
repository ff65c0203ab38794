import fc from 'fast-check';
import { expect } from 'vitest';
import { CorruptDataError } from '@s4/core';
import type { ByteRange } from '../segment/block-v2.js';

/**
 * Property: flipping any bits of any one byte inside `ranges` of `bytes` makes `read` either give
 * exactly what it gives on the intact bytes or throw CorruptDataError; never other data.
 */
export function expectFlipsDetected(bytes: Uint8Array, ranges: readonly ByteRange[], read: (bytes: Uint8Array) => string, numRuns = 300): void {
  const want = read(bytes);
  fc.assert(
    fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), (at, mask) => {
      const r = ranges[at % ranges.length]!;
      const copy = bytes.slice();
      copy[r.offset + (Math.floor(at / ranges.length) % r.length)]! ^= mask;
      let got: string | CorruptDataError;
      try {
        got = read(copy);
      } catch (err) {
        got = err as CorruptDataError;
      }
      if (typeof got === 'string') expect(got).toBe(want);
      else expect(got).toBeInstanceOf(CorruptDataError);
    }),
    { numRuns },
  );
}
