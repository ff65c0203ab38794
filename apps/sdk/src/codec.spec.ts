import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MsgpackStreamDecoder, concatBytes, joinChunks, packr, toSeriesColumns } from './codec.js';
import { S4DecodeError } from './errors.js';

describe('MsgpackStreamDecoder', () => {
  it('recovers every value from concatenated MessagePack cut at arbitrary points', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ metric: fc.string(), n: fc.array(fc.double({ noNaN: true }), { maxLength: 50 }), s: fc.array(fc.oneof(fc.string(), fc.constant(null))) }), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (values, cuts) => {
          const encoded = values.map((v) => packr.pack({ metric: v.metric, ts: Float64Array.from(v.n), s: v.s }));
          const bytes = concatBytes(encoded);
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const decoder = new MsgpackStreamDecoder();
          const out: unknown[] = [];
          let at = 0;
          for (const p of [...points, bytes.length]) {
            out.push(...decoder.push(bytes.subarray(at, p)));
            at = p;
          }
          out.push(...decoder.end());
          expect(out).toEqual(values.map((v) => ({ metric: v.metric, ts: Float64Array.from(v.n), s: v.s })));
        },
      ),
    );
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
