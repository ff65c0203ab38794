import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, WINDOW_MS, daySegmentKey, segmentKey, type FieldValue, type ObjectStore } from '@s4/core';
import { encodeSegment, type CatalogEntry, type SegmentSeriesInput } from '@s4/format';
import { entryOf } from '../catalog/catalog-store.js';
import type { Tombstone } from '../deletes/tombstones.js';
import { foldParts, foldWindow } from './fold.js';

const REF = { ns: 'default', shard: 0 };
const DAY = 20_000 * DAY_MS;
const WINDOW = DAY + 3 * WINDOW_MS;

/** Only get is used by the folds. */
function store(objects: Map<string, Uint8Array>): ObjectStore {
  return {
    get: async (key: string) => {
      const body = objects.get(key);
      return body ? { notModified: false, body, etag: key, size: body.length } : null;
    },
  } as unknown as ObjectStore;
}

const value: fc.Arbitrary<FieldValue> = fc.oneof(
  fc.constant(null),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 3 }),
  fc.boolean(),
  fc.record({ a: fc.integer(), b: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }) }),
);

/** One part: some of four series, a few samples each, at offsets within [base, base + span). */
function part(base: number, span: number): fc.Arbitrary<SegmentSeriesInput[]> {
  return fc
    .uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 })
    .chain((ids) =>
      fc.tuple(
        ...ids.map((i) =>
          fc.uniqueArray(fc.integer({ min: 0, max: span - 1 }), { minLength: 1, maxLength: 6 }).chain((offsets) => {
            const ts = [...offsets].sort((a, b) => a - b).map((o) => base + o);
            return fc.tuple(fc.array(value, { minLength: ts.length, maxLength: ts.length }), fc.array(value, { minLength: ts.length, maxLength: ts.length })).map(([x, y]) => ({
              id: `s${i}`,
              metric: 'm',
              tags: { host: `h${i}` },
              ts,
              fields: Object.assign(Object.create(null) as Record<string, FieldValue[]>, { x, y }),
            }));
          }),
        ),
      ),
    )
    .map((series) => series.sort((a, b) => (a.id < b.id ? -1 : 1)));
}

/** The encoder's way through a lazy fold: each series once, in order, ts then fields. */
function materialize(series: readonly SegmentSeriesInput[]) {
  return series.map((s) => ({ id: s.id, metric: s.metric, tags: s.tags, ts: s.ts, fields: { ...s.fields } }));
}

describe('foldWindow', () => {
  it('gives the series, columns and span foldParts gives, with hour parts, a day object and tombstones', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Offsets in 0..99 ms: a few distinct timestamps, so parts overlap and newest wins.
        fc.array(part(WINDOW, 100), { minLength: 1, maxLength: 3 }),
        // A day object with samples in this window and in the next (clipped away).
        fc.option(part(WINDOW + WINDOW_MS - 50, 100)),
        fc.array(fc.record({ i: fc.integer({ min: 0, max: 3 }), from: fc.integer({ min: 0, max: 120 }), len: fc.integer({ min: 1, max: 120 }) }), { maxLength: 2 }),
        async (hours, day, deletes) => {
          const objects = new Map<string, Uint8Array>();
          const entries: CatalogEntry[] = [];
          const add = (key: string, window: number, part: number, fence: number, series: SegmentSeriesInput[]) => {
            const bytes = encodeSegment({ ns: REF.ns, shard: REF.shard, window, series });
            objects.set(key, bytes);
            const ts = series.flatMap((s) => s.ts);
            entries.push(entryOf(key, bytes, { window: WINDOW, part, fence, series, samples: ts.length, minTs: Math.min(...ts), maxTs: Math.max(...ts), createdAt: 0 }));
          };
          if (day) add(daySegmentKey(REF, DAY, 1, 1), DAY, 1, 1, day);
          hours.forEach((series, k) => add(segmentKey(REF, WINDOW, k + 2, 2), WINDOW, k + 2, 2, series));
          const tombstones: Tombstone[] = deletes.map((d, k) => ({ id: `t${k}`, metric: 'm', tags: { host: `h${d.i}` }, from: WINDOW + d.from, to: WINDOW + d.from + d.len, createdAt: 0 }));
          const want = await foldParts(store(objects), entries, 2, tombstones);
          const lazy = await foldWindow(store(objects), entries, 2, tombstones);
          expect(materialize(lazy.series)).toEqual(materialize(want.series));
          expect(lazy.span()).toEqual({ samples: want.samples, minTs: want.minTs, maxTs: want.maxTs });
          // And what is encoded from each is the same object.
          if (want.series.length > 0)
            expect(encodeSegment({ ns: REF.ns, shard: REF.shard, window: WINDOW, series: (await foldWindow(store(objects), entries, 2, tombstones)).series })).toEqual(
              encodeSegment({ ns: REF.ns, shard: REF.shard, window: WINDOW, series: want.series }),
            );
        },
      ),
      { numRuns: 150 },
    );
  });
});
