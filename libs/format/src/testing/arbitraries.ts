import fc from 'fast-check';
import type { FieldValue } from '@s4/core';
import type { SegmentSeriesInput } from '../segment/types.js';

/** Test helpers (excluded from the build): random series that exercise every codec path. */
const MAX = Number.MAX_SAFE_INTEGER;

export const unicode = fc.string({ unit: 'binary', maxLength: 12 });

/** Sorted unique timestamps: regular with jitter, or anywhere in the safe range (huge gaps, negatives). */
export const timestamps = (maxLength = 40): fc.Arbitrary<number[]> =>
  fc.oneof(
    fc.uniqueArray(fc.integer({ min: -MAX, max: MAX }), { maxLength }).map((a) => a.sort((x, y) => x - y)),
    fc.uniqueArray(fc.integer({ min: -5_000, max: 5_000 }), { maxLength }).map((a) => a.sort((x, y) => x - y)),
    fc
      .tuple(fc.integer({ min: 0, max: 2 ** 45 }), fc.integer({ min: 1, max: 60_000 }), fc.integer({ min: 0, max: maxLength }))
      .map(([start, step, n]) => Array.from({ length: n }, (_, i) => start + i * step + (i % 3 === 1 ? Math.floor(step / 4) : 0))),
  );

const scalarKinds: fc.Arbitrary<FieldValue>[] = [
  fc.double(),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((x) => x / 100),
  fc.integer({ min: -MAX, max: MAX }),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 0.1 + 0.2),
  fc.boolean(),
  unicode,
  fc.constantFrom('', 'a', 'b', '😀'),
];
const nested: fc.Arbitrary<FieldValue> = fc.oneof(
  fc.jsonValue() as fc.Arbitrary<FieldValue>,
  fc.constantFrom<FieldValue>([1, -0, 'x'], JSON.parse('{"__proto__":{"a":1},"b":[true,null]}') as FieldValue, { deep: [[[]]] }),
);

/** One column of length n: a single kind (the common case) or any mix, with optional nulls. */
export const column = (n: number): fc.Arbitrary<FieldValue[]> =>
  fc.oneof(
    fc.integer({ min: 0, max: scalarKinds.length }).chain((k) => {
      const kind = k < scalarKinds.length ? scalarKinds[k]! : nested;
      return fc.array(fc.option(kind, { nil: null, freq: 4 }), { minLength: n, maxLength: n });
    }),
    fc.array(fc.option(fc.oneof(...scalarKinds, nested), { nil: null }), { minLength: n, maxLength: n }),
    fc.constant(new Array<FieldValue>(n).fill(null)),
  );

export const series = (id: string, maxSamples = 40): fc.Arbitrary<SegmentSeriesInput> =>
  timestamps(maxSamples).chain((ts) =>
    fc.record({
      id: fc.constant(id),
      metric: unicode,
      tags: fc.dictionary(unicode, unicode, { maxKeys: 4 }),
      ts: fc.constant(ts),
      fields: fc.dictionary(fc.oneof(unicode, fc.constantFrom('value', '10', '9', '__proto__')), column(ts.length), { maxKeys: 4 }),
    }),
  );

export const seriesList = (maxSeries = 6): fc.Arbitrary<SegmentSeriesInput[]> =>
  fc
    .uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }), { maxLength: maxSeries })
    .chain((ids) => (ids.length === 0 ? fc.constant([]) : fc.tuple(...ids.map((id) => series(id)))));

/** Keys that stress path names and objects: separators, escapes, integer-like, prototype names, unicode. */
export const nastyKey = fc.oneof(
  fc.constantFrom('a', 'b', 'c', 'x.y', '[]', 'a[', ']', 'back\\slash', '.', '', '10', '9', '__proto__', 'constructor', 'ü', '😀'),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const smallKey = fc.constantFrom('a', 'b', 'c', 'x.y', '[]', '10', '__proto__');
const leaf: fc.Arbitrary<FieldValue> = fc.oneof(
  fc.double(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.integer({ min: -100_000, max: 100_000 }).map((x) => x / 100),
  fc.constantFrom(NaN, -0, 0, Infinity, -Infinity, 5e-324),
  fc.boolean(),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constant(null),
);

/** A nested JSON value over `keys`, up to `depth` levels: arrays of objects, empty containers, mixed types. */
export const nestedValue = (keys: fc.Arbitrary<string>, depth = 4): fc.Arbitrary<FieldValue> =>
  fc.letrec<{ v: FieldValue }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small', maxDepth: depth },
      leaf,
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(keys, tie('v'), { maxKeys: 4 }) as fc.Arbitrary<FieldValue>,
    ),
  })).v;

/**
 * Records of changing shape as field columns: fields over a small key alphabet, so that samples
 * share paths (keys come and go, types change at a path, arrays grow and shrink), or over any
 * keys; a record lacking a field has null there.
 */
export const nestedColumns = (maxSamples = 12): fc.Arbitrary<{ ts: number[]; fields: Record<string, FieldValue[]> }> =>
  fc.integer({ min: 0, max: maxSamples }).chain((n) =>
    fc.record({
      ts: fc.constant(Array.from({ length: n }, (_, i) => 1_763_784_000_000 + i * 1000)),
      fields: fc.dictionary(
        fc.oneof(smallKey, nastyKey),
        fc.oneof(
          fc.array(fc.option(nestedValue(smallKey), { nil: null, freq: 5 }), { minLength: n, maxLength: n }),
          fc.array(fc.option(nestedValue(nastyKey, 3), { nil: null, freq: 5 }), { minLength: n, maxLength: n }),
        ),
        { maxKeys: 3 },
      ),
    }),
  );

/** Every key path in a value, as key sequences (array steps implicit), for choosing projections. */
export function keyPaths(v: FieldValue, prefix: string[] = [], out: string[][] = []): string[][] {
  if (Array.isArray(v)) for (const x of v) keyPaths(x, prefix, out);
  else if (v !== null && typeof v === 'object') {
    for (const k of Object.keys(v)) {
      out.push([...prefix, k]);
      keyPaths(v[k]!, [...prefix, k], out);
    }
  }
  return out;
}
