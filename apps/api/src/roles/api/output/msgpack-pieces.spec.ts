import { msgpack } from '@s4/format';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PieceWriter } from './msgpack-pieces.js';

const written = (w: PieceWriter, v: unknown): Buffer => {
  w.value(v);
  return Buffer.concat(w.take());
};

/** Typed arrays of every kind msgpackr has a code for, long and short (views go out above VIEW_BYTES), some of them views into a bigger buffer. */
const typed = fc.oneof(
  fc.float64Array({ maxLength: 600 }),
  fc.float32Array({ maxLength: 900 }),
  fc.uint8Array({ maxLength: 3000 }).map((a) => a.subarray(a.length >> 2)),
  fc.int8Array({ maxLength: 40 }),
  fc.uint16Array({ maxLength: 1200 }),
  fc.int16Array({ maxLength: 40 }),
  fc.uint32Array({ maxLength: 700 }),
  fc.int32Array({ maxLength: 40 }),
  fc.uint8ClampedArray({ maxLength: 40 }),
  fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
);
/** Numbers of every encoding: fixints, each integer width, doubles, -0, NaN, infinities. */
const number = fc.oneof(fc.integer({ min: -40, max: 200 }), fc.integer(), fc.maxSafeInteger(), fc.double(), fc.constantFrom(-0, Number.NaN, Infinity, -Infinity, 2 ** 32, -(2 ** 31) - 1));
/** Strings: unicode, long ones (every header width) and lone surrogates. */
const string = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 70_000 }), fc.constantFrom('\ud800', 'a\udc00b', '', '__proto__'));
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, number, string, fc.boolean(), fc.constant(null), typed, fc.array(tie('tree'), { maxLength: 20 }), fc.dictionary(string, tie('tree'), { maxKeys: 20 }), fc.constant(undefined), fc.date({ noInvalidDate: true })),
}));

describe('PieceWriter', () => {
  it('writes what msgpack.pack writes, value for value', () => {
    const w = new PieceWriter();
    fc.assert(
      fc.property(tree, (v) => {
        expect(msgpack.unpack(written(w, v))).toStrictEqual(msgpack.unpack(msgpack.pack(v)));
      }),
      { numRuns: 300 },
    );
  });

  it('writes a chunk of node columns byte for byte as msgpack.pack', () => {
    const node = { c: 3, k: 5, a: true, h: [['lat', 'lon']], m: ['lat', { c: 3, k: 2, a: true, n: Float64Array.of(1.5, 2, -3) }, 'lon', { c: 3, k: 2, a: true, n: new Float32Array(1000).fill(0.5) }] };
    const chunk = { metric: 'machine.record', tags: { machine: 'm000' }, ts: new Float64Array(3000).fill(1.7e12), fields: {}, shredded: ['position', node], names: ['position'] };
    expect(written(new PieceWriter(), chunk).equals(msgpack.pack(chunk))).toBe(true);
  });

  it('sends long typed arrays as views of their own memory, short ones copied', () => {
    const long = new Float64Array(PieceWriter.VIEW_BYTES / 8);
    const short = new Float64Array(4);
    const w = new PieceWriter();
    w.value({ long, short });
    const pieces = w.take();
    expect(pieces.some((p) => p.buffer === long.buffer && p.byteOffset === 0 && p.length === long.byteLength)).toBe(true);
    expect(pieces.some((p) => p.buffer === short.buffer)).toBe(false);
    expect(w.take()).toEqual([]);
  });

  it('keeps what it has written when its scratch buffer fills up', () => {
    const w = new PieceWriter();
    const strings = Array.from({ length: 5000 }, (_, i) => `s${i}`.repeat(10));
    w.value(strings);
    const first = Buffer.concat(w.take());
    w.value(['after']);
    expect(msgpack.unpack(first)).toEqual(strings);
  });
});
