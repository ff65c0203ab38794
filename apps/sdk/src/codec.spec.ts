import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MsgpackStreamDecoder, concatBytes, joinChunks, packr, toSeriesColumns, unpackr } from './codec.js';
import { S4DecodeError } from './errors.js';

/** The values of `bytes` fed to a stream decoder in pieces cut at `cuts` (modulo its length). */
function decodeCut(bytes: Uint8Array, cuts: readonly number[]): unknown[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const decoder = new MsgpackStreamDecoder();
  const out: unknown[] = [];
  let at = 0;
  for (const p of [...points, bytes.length]) {
    out.push(...decoder.push(bytes.subarray(at, p)));
    at = p;
  }
  out.push(...decoder.end());
  return out;
}

describe('MsgpackStreamDecoder', () => {
  it('recovers every value from concatenated MessagePack cut at arbitrary points', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ metric: fc.string(), n: fc.array(fc.double({ noNaN: true }), { maxLength: 50 }), s: fc.array(fc.oneof(fc.string(), fc.constant(null))) }), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (values, cuts) => {
          const encoded = values.map((v) => packr.pack({ metric: v.metric, ts: Float64Array.from(v.n), s: v.s }));
          const bytes = concatBytes(encoded);
          expect(decodeCut(bytes, cuts)).toEqual(values.map((v) => ({ metric: v.metric, ts: Float64Array.from(v.n), s: v.s })));
        },
      ),
    );
  });

  it('frames every kind of MessagePack header (all sizes of strings, binaries, extensions, arrays, maps, numbers), cut anywhere', () => {
    const big = (n: number): string => 'x'.repeat(n);
    const leaf = fc.oneof(
      fc.constantFrom(null, true, false, 0, -1, 127, 128, -32, -33, 255, 256, 65_535, 65_536, -129, -32_769, 2 ** 32, -(2 ** 31) - 1, 2 ** 53 - 1, 0.5, -1.25e300),
      fc.double({ noNaN: true }),
      fc.integer(),
      fc.string({ maxLength: 40 }),
      fc.constantFrom(big(31), big(32), big(255), big(256), big(70_000)),
      fc.uint8Array({ maxLength: 300 }),
      fc.float64Array({ noNaN: true, maxLength: 40 }),
      fc.constantFrom(new Uint8Array(0), new Float32Array([1.5, 2]), new Int16Array(17), new Uint32Array(70_000), new Int8Array(1), new Int16Array(1), new Int32Array(1), new Float64Array(2)),
    );
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('v'), { maxLength: 20 }), fc.dictionary(fc.string({ maxLength: 8 }), tie('v'), { maxKeys: 20 })),
    })).v;
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 30 }), (values, cuts) => {
        const bytes = concatBytes(values.map((v) => packr.pack(v)));
        expect(decodeCut(bytes, cuts)).toEqual(values.map((v) => unpackr.unpack(packr.pack(v))));
      }),
      { numRuns: 100 },
    );
  });

  it('gives each value as soon as its last byte is in, byte by byte', () => {
    const values = [{ a: 1 }, [1, 2, 3], 'abc', new Float64Array([1, 2]), {}, []];
    const bytes = concatBytes(values.map((v) => packr.pack(v)));
    const decoder = new MsgpackStreamDecoder();
    const seen: number[] = [];
    for (let i = 0; i < bytes.length; i++) if (decoder.push(bytes.subarray(i, i + 1)).length > 0) seen.push(i + 1);
    let end = 0;
    expect(seen).toEqual(values.map((v) => (end += packr.pack(v).length)));
  });

  it('rejects a byte MessagePack never uses', () => {
    expect(() => new MsgpackStreamDecoder().push(Uint8Array.of(0x91, 0xc1))).toThrow(S4DecodeError);
  });

  it('decodes a large value arriving in small pieces in linear time', () => {
    const big = packr.pack({ ts: new Float64Array(2_000_000).map((_, i) => i) });
    const decoder = new MsgpackStreamDecoder();
    const start = performance.now();
    const out: unknown[] = [];
    for (let at = 0; at < big.length; at += 16_384) out.push(...decoder.push(big.subarray(at, at + 16_384)));
    out.push(...decoder.end());
    expect(out).toHaveLength(1);
    expect(performance.now() - start).toBeLessThan(5_000); // quadratic re-parsing would take minutes
  });

  it('reports a stream cut inside a value', () => {
    const bytes = packr.pack({ ts: new Float64Array(100) });
    const decoder = new MsgpackStreamDecoder();
    decoder.push(bytes.subarray(0, 50));
    expect(() => decoder.end()).toThrow(S4DecodeError);
  });
});

describe('joinChunks', () => {
  it('joins consecutive chunks of a series, keeping Float64Array only where every chunk has one', () => {
    const chunks = [
      toSeriesColumns({ metric: 'm', tags: { a: '1' }, ts: Float64Array.of(1, 2), fields: { v: Float64Array.of(10, 20), s: ['x', null] } }),
      toSeriesColumns({ metric: 'm', tags: { a: '1' }, ts: Float64Array.of(3), fields: { v: [null] } }),
      toSeriesColumns({ metric: 'm', tags: { a: '2' }, ts: [5], fields: { v: [1] } }),
    ];
    const [a, b] = joinChunks(chunks);
    expect(Array.from(a?.ts ?? [])).toEqual([1, 2, 3]);
    expect(a?.fields.v).toEqual([10, 20, null]);
    expect(a?.fields.s).toEqual(['x', null, null]);
    expect(b?.ts).toBeInstanceOf(Float64Array);
    expect(b?.fields.v).toEqual(Float64Array.of(1));
  });

  it('rejects a column whose length differs from ts', () => {
    expect(() => toSeriesColumns({ metric: 'm', tags: {}, ts: [1, 2], fields: { v: [1] } })).toThrow(/does not match/);
  });
});
