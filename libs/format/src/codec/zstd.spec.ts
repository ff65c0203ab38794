import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { zstdCompress, zstdContextKept, zstdDecompress, zstdDecompressKept } from './zstd.js';

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

describe('zstdDecompress', () => {
  it('runs on a kept context on the Node this project pins', () => {
    expect(zstdDecompressKept()).toBe(true);
  });

  it('gives the bytes back, call after call on one context, and refuses a frame that is not what it says without harm to the next', () => {
    const payload = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 200 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5000 }).map((a) => Uint8Array.from(a)),
      fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 70_000 })).map(([v, n]) => new Uint8Array(n).fill(v)),
    );
    // What happens to a frame before it is read: nothing, cut short, a byte flipped, or a raw length that is off by one.
    const harm = fc.constantFrom('none', 'cut', 'flip', 'longer', 'shorter');
    fc.assert(
      fc.property(fc.array(fc.tuple(payload, harm, fc.nat()), { minLength: 1, maxLength: 8 }), (calls) => {
        for (const [b, how, at] of calls) {
          const frame = Uint8Array.from(zstdCompressSync(b));
          if (how === 'none') {
            expect(zstdDecompress(frame, b.length)).toEqual(b);
            continue;
          }
          let data = frame;
          let rawLen = b.length;
          if (how === 'cut') data = frame.subarray(0, at % frame.length);
          if (how === 'flip') data[at % frame.length]! ^= 1 << at % 8;
          if (how === 'longer') rawLen++;
          if (how === 'shorter') rawLen--;
          const got = zstdDecompress(data, rawLen);
          // Whatever the kept context takes, the public call gives the same (frames carry a crc32 for
          // flipped bits: zstd alone may decode them to other bytes, both ways alike).
          if (got !== null) expect(got).toEqual(new Uint8Array(zstdDecompressSync(data)));
        }
      }),
      { numRuns: 300 },
    );
  });
});
