import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, WINDOW_MS, daySegmentKey, isDaySegmentKey, nameMap, segmentKey, type FieldValue, type ObjectStore } from '@s4/core';
import { decodeSegment, encodeSegment, type CatalogEntry, type SegmentSeriesInput } from '@s4/format';
import { entryOf, spanOf } from '../catalog/catalog-store.js';
import { clip, mergeSources, type Source } from '../columns/merge.js';
import { withoutDeleted, type Tombstone } from '../deletes/tombstones.js';
import { byPrecedence, foldParts, foldWindow } from './fold.js';

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

/**
 * The reference: every part decoded whole (a day object clipped to the window), merged per series
 * in precedence order, deleted samples and empty series and all-null columns left out.
 */
function eagerFold(objects: Map<string, Uint8Array>, parts: readonly CatalogEntry[], deleted: readonly Tombstone[]) {
  const bySeries = new Map<string, { metric: string; tags: Record<string, string>; sources: Source[] }>();
  for (const part of [...parts].sort(byPrecedence)) {
    for (const s of decodeSegment(objects.get(part.key)!).series) {
      const data = isDaySegmentKey(part.key) ? clip(s, part.window, part.window + WINDOW_MS) : s;
      if (data.ts.length === 0) continue;
      let e = bySeries.get(s.id);
      if (!e) bySeries.set(s.id, (e = { metric: s.metric, tags: s.tags, sources: [] }));
      e.sources.push({ data: { ts: data.ts, fields: data.fields }, sortedUnique: true });
    }
  }
  const series: SegmentSeriesInput[] = [];
  for (const [id, { metric, tags, sources }] of bySeries) {
    const merged = withoutDeleted(mergeSources(sources), { metric, tags }, deleted);
    if (merged.ts.length === 0) continue;
    const fields = nameMap<FieldValue[]>();
    for (const [f, col] of Object.entries(merged.fields)) if (col.some((v) => v !== null)) fields[f] = col;
    series.push({ id, metric, tags, ts: merged.ts, fields });
  }
  series.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { series, ...spanOf(series) };
}

describe('foldWindow', () => {
  it('gives the series, columns and span of every part decoded whole, with hour parts, a day object and tombstones', async () => {
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
          const want = eagerFold(objects, entries, tombstones);
          const lazy = await foldWindow(store(objects), entries, 2, tombstones);
          expect(materialize(lazy.series)).toEqual(materialize(want.series));
          expect(lazy.span()).toEqual({ samples: want.samples, minTs: want.minTs, maxTs: want.maxTs });
          const eager = await foldParts(store(objects), entries, 2, tombstones);
          expect(materialize(eager.series)).toEqual(materialize(want.series));
          expect({ samples: eager.samples, minTs: eager.minTs, maxTs: eager.maxTs }).toEqual({ samples: want.samples, minTs: want.minTs, maxTs: want.maxTs });
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
  it('reads a window out of a day object with row groups as the whole object clipped', async () => {
    const ts = Array.from({ length: 8_640 }, (_, i) => DAY + i * 10_000);
    const day: SegmentSeriesInput = { id: 's0', metric: 'm', tags: { host: 'h0' }, ts, fields: Object.assign(nameMap<FieldValue[]>(), { x: ts.map((t, i) => (i % 7 === 0 ? null : t / 1000)), y: ts.map((_, i) => ({ i })) }) };
    const objects = new Map<string, Uint8Array>();
    const key = daySegmentKey(REF, DAY, 1, 1);
    const bytes = encodeSegment({ ns: REF.ns, shard: REF.shard, window: DAY, series: [day] });
    objects.set(key, bytes);
    expect(decodeSegment(bytes).footer.series[0]!.directory!.layout.groups).toBeDefined(); // written with row groups: what this case is about
    const late = segmentKey(REF, WINDOW, 2, 2);
    const lateSeries: SegmentSeriesInput[] = [{ id: 's0', metric: 'm', tags: { host: 'h0' }, ts: [WINDOW + 5, WINDOW + 10_000], fields: Object.assign(nameMap<FieldValue[]>(), { x: [1, 2] }) }];
    objects.set(late, encodeSegment({ ns: REF.ns, shard: REF.shard, window: WINDOW, series: lateSeries }));
    for (const window of [DAY, WINDOW, DAY + 23 * WINDOW_MS]) {
      const entries = [entryOf(key, bytes, { window, part: 1, fence: 1, series: [day], samples: ts.length, minTs: ts[0]!, maxTs: ts.at(-1)!, createdAt: 0 })];
      if (window === WINDOW) entries.push(entryOf(late, objects.get(late)!, { window, part: 2, fence: 2, series: lateSeries, samples: 2, minTs: WINDOW + 5, maxTs: WINDOW + 10_000, createdAt: 0 }));
      const want = eagerFold(objects, entries, []);
      expect(want.samples).toBeGreaterThan(300);
      const got = await foldParts(store(objects), entries, 2, []);
      expect(materialize(got.series)).toEqual(materialize(want.series));
    }
  });
});
