import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameMap, type FieldValue } from '@s4/core';
import { clip, concatWindows, isSortedUnique, mergeSources } from './merge.js';

describe('mergeSources', () => {
  it('sorts, de-duplicates, and lets later sources and later rows win', () => {
    const merged = mergeSources([
      { data: { ts: [1, 2, 3], fields: { v: [1, 2, 3] } }, sortedUnique: true },
      { data: { ts: [3, 0, 2, 2], fields: { v: [30, 0, 20, 21], s: [null, 'x', null, null] } }, sortedUnique: false },
    ]);
    expect(merged).toEqual({ ts: [0, 1, 2, 3], fields: { v: [0, 1, 21, 30], s: ['x', null, null, null] } });
  });

  it('merges any sources as a map of timestamps to the last row written there would', () => {
    // A source is sorted and unique (as a block is) or any rows (as a hot log is); `shift` moves
    // its times past the ones before it, so that sources following one another in time come up.
    const source = fc.integer({ min: 0, max: 6 }).chain((n) =>
      fc.record({
        ts: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: n, maxLength: n }),
        fields: fc.dictionary(fc.constantFrom('a', 'b', '10', 'constructor'), fc.array(fc.oneof(fc.integer(), fc.constant(null)), { minLength: n, maxLength: n })),
        sorted: fc.boolean(),
        shift: fc.boolean(),
      }),
    );
    let sequences = 0;
    fc.assert(
      fc.property(fc.array(source, { maxLength: 6 }), (generated) => {
        let base = 0;
        const sources = generated.map(({ ts, fields, sorted, shift }) => {
          if (shift) ts = ts.map((t) => t + base);
          base = Math.max(base, ...ts.map((t) => t + 1));
          if (!sorted) return { ts, fields, sorted };
          // Sorted and unique: the last row of each timestamp, in time order.
          const last = new Map<number, number>();
          ts.forEach((t, i) => last.set(t, i));
          const rows = [...last.entries()].sort((x, y) => x[0] - y[0]).map(([, i]) => i);
          return { ts: rows.map((i) => ts[i]!), fields: Object.fromEntries(Object.entries(fields).map(([f, col]) => [f, rows.map((i) => col[i]!)])), sorted };
        });
        if (sources.length > 1 && sources.every((s, i) => s.sorted && (i === 0 || s.ts.length === 0 || s.ts[0]! > Math.max(-1, ...sources.slice(0, i).flatMap((x) => x.ts))))) sequences++;
        const names = new Set(sources.flatMap((s) => Object.keys(s.fields)));
        const rows = new Map<number, Map<string, FieldValue>>();
        for (const s of sources)
          s.ts.forEach((t, i) => {
            const row = new Map<string, FieldValue>();
            for (const f of names) row.set(f, s.fields[f]?.[i] ?? null);
            rows.set(t, row);
          });
        const times = [...rows.keys()].sort((x, y) => x - y);
        const want = { ts: times, fields: nameMap([...names].map((f) => [f, times.map((t) => rows.get(t)!.get(f)!)] as [string, FieldValue[]])) };
        const got = mergeSources(sources.map((s) => ({ data: { ts: s.ts, fields: nameMap(Object.entries(s.fields) as [string, FieldValue[]][]) }, sortedUnique: s.sorted })));
        expect(got).toEqual(want);
      }),
      { numRuns: 1000 },
    );
    expect(sequences).toBeGreaterThan(10);
  });

  it('says which columns a merge would leave as they are (the flusher then skips it)', () => {
    const columns = fc.integer({ min: 0, max: 6 }).chain((n) =>
      fc.record({
        ts: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: n, maxLength: n }),
        fields: fc.dictionary(fc.constantFrom('a', 'b', '10'), fc.array(fc.oneof(fc.integer(), fc.constant(null), fc.constant(undefined)), { minLength: n, maxLength: n + 1 })),
      }),
    );
    let sorted = 0;
    fc.assert(
      fc.property(columns, ({ ts, fields }) => {
        const data = { ts, fields: nameMap(Object.entries(fields) as [string, FieldValue[]][]) };
        if (!isSortedUnique(data)) return;
        sorted++;
        expect(mergeSources([{ data, sortedUnique: false }])).toEqual(data);
      }),
      { numRuns: 500 },
    );
    expect(sorted).toBeGreaterThan(20);
    expect(isSortedUnique({ ts: [1, 1], fields: nameMap() })).toBe(false);
    expect(isSortedUnique({ ts: [1, 2], fields: nameMap([['v', [1, undefined as unknown as FieldValue]]]) })).toBe(false);
    expect(isSortedUnique({ ts: [1, 2], fields: nameMap([['v', [1]]]) })).toBe(false);
  });

  it('clips to [from, to) and projects fields', () => {
    const data = { ts: [1, 2, 3, 4], fields: { v: [1, 2, 3, 4], s: [null, null, null, 'x'] } };
    expect(clip(data, 2, 4)).toEqual({ ts: [2, 3], fields: { v: [2, 3] } });
    expect(clip(data, 0, 10, ['s', 'missing'])).toEqual({ ts: [1, 2, 3, 4], fields: { s: [null, null, null, 'x'], missing: [null, null, null, null] } });
  });

  it('concatenates windows, filling fields a window lacks', () => {
    expect(concatWindows([{ ts: [1], fields: { a: [1] } }, { ts: [5], fields: { b: [2] } }])).toEqual({ ts: [1, 5], fields: { a: [1, null], b: [null, 2] } });
  });
});
