import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { zstdCompress, zstdContextKept } from './zstd.js';

const reference = (b: Uint8Array, level: number) => new Uint8Array(zstdCompressSync(b, { params: { [constants.ZSTD_c_compressionLevel]: level } }));

describe('zstdCompress', () => {
  it('runs on kept contexts on the Node this project pins (else every small frame pays a context)', () => {
    expect(zstdContextKept()).toBe(true);
  });

  it('gives the bytes zstdCompressSync gives, call after call on one context', () => {
    // Small alphabets and runs, so that raw, RLE and compressed blocks all occur; sizes on both sides of the kept path's limit.
    const payload = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 5000 }).map((a) => Uint8Array.from(a)),
      fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 70_000 })).map(([v, n]) => new Uint8Array(n).fill(v)),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(payload, fc.constantFrom(1, 3, 9)), { minLength: 1, maxLength: 8 }), (calls) => {
        for (const [b, level] of calls) {
          const got = Uint8Array.from(zstdCompress(b, level));
          expect(got).toEqual(reference(b, level));
          expect(new Uint8Array(zstdDecompressSync(got))).toEqual(b);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('returns a view that the next call may overwrite', () => {
    const a = zstdCompress(new Uint8Array(100).fill(1), 3);
    const copy = a.slice();
    zstdCompress(new TextEncoder().encode('other bytes '.repeat(20)), 3);
    expect(a).not.toEqual(copy);
  });
});
