import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectFlipsDetected } from '../testing/corruption.js';
import type { FieldValue } from '@s4/core';
import { assemble, columnRanges, decodeBlockColumns, decodeFooter, decodeGroupColumns, decodeSegment, encodeSegment, groupsOf, numberColumns, readTrailer, ROOTS_ONLY, SEGMENT_TRAILER_BYTES, sliceColumns } from '../index.js';
import { nestedColumns } from '../testing/arbitraries.js';
import { ordered } from '../testing/exact-json.js';
import { gpsRecords, toColumns } from '../testing/gps.js';
import { encodeSeriesIndex, decodeSeriesIndex, indexedEntry } from '../series-index/series-index.js';

const H = 1_763_784_000_000;

/** One series in a segment written with row groups of at least `groupRows` samples. */
function segment(ts: number[], fields: Record<string, FieldValue[]>, groupRows: number, version?: 3 | 4) {
  // Blocks of numbers only are split too, however few their values (GROUP_NUMBER_CELLS is the writer's default).
  const bytes = encodeSegment({ ns: 'n', shard: 0, window: H, series: [{ id: 's', metric: 'm', tags: {}, ts, fields }] }, { groupRows, groupNumberCells: 0, version });
  const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
  const entry = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
  return { bytes, entry };
}

/** Copies only the given ranges of `bytes` into a buffer of garbage: a reader must not need the rest. */
function onlyRanges(bytes: Uint8Array, ranges: { offset: number; length: number }[]): Uint8Array {
  const out = new Uint8Array(bytes.length).fill(0xa5);
  for (const r of ranges) out.set(bytes.subarray(r.offset, r.offset + r.length), r.offset);
  return out;
}

/** Nested records at irregular times (gaps from a millisecond to minutes), so that blocks split into groups of every size. */
const timedColumns = nestedColumns(40).chain(({ ts, fields }) =>
  fc.array(fc.constantFrom(1, 7, 250, 999, 1000, 1001, 4000, 59_999, 61_000, 300_000), { minLength: ts.length, maxLength: ts.length }).map((gaps) => {
    let t = H + 500;
    return { ts: gaps.map((g) => (t += g)), fields };
  }),
);

const lowerBound = (a: readonly number[], x: number) => {
  let i = 0;
  while (i < a.length && a[i]! < x) i++;
  return i;
};

/** Records in [from, to) read through the row groups that overlap it, as the raw reader does. */
function readRange(bytes: Uint8Array, entry: ReturnType<typeof segment>['entry'], from: number, to: number, paths?: string[]) {
  const groups = groupsOf(entry, from, to);
  const ranges = groups.flatMap((g) => columnRanges(entry, paths, g < 0 ? undefined : g));
  const only = onlyRanges(bytes, ranges);
  const ts: number[] = [];
  // Field names are user data (`constructor`, `__proto__`): no prototype.
  const fields = Object.create(null) as Record<string, FieldValue[]>;
  for (const g of groups) {
    const cols = g < 0 ? decodeBlockColumns(only, entry, paths, 0) : decodeGroupColumns(only, entry, g, paths, 0);
    const part = assemble(sliceColumns(cols, lowerBound(cols.ts, from), lowerBound(cols.ts, to)));
    ts.push(...part.ts);
    for (const [name, col] of Object.entries(part.fields)) (fields[name] ??= []).push(...col);
  }
  return { ts, fields, groups };
}

describe('segment v3: row groups', () => {
  it('splits an hour of numbers only from GROUP_NUMBER_CELLS values, and an hour of records always', () => {
    const ts = Array.from({ length: 3600 }, (_, i) => H + i * 1000);
    const floats = (k: number) => Object.fromEntries(Array.from({ length: k }, (_, f) => [`f${f}`, ts.map((_, i) => (i % 7 === 3 ? null : Math.round(Math.sin(i + f) * 1e4) / 100))]));
    const groups = (fields: Record<string, FieldValue[]>) => {
      const bytes = encodeSegment({ ns: 'n', shard: 0, window: H, series: [{ id: 's', metric: 'm', tags: {}, ts, fields }] });
      const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
      return groupsOf(decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!).length;
    };
    expect(groups(floats(1))).toBe(1); // 3,600 values: whole
    expect(groups(floats(9))).toBe(1); // 32,400
    expect(groups(floats(10))).toBe(6); // 36,000: 10-minute groups
    expect(groups({ ...floats(1), s: ts.map((_, i) => `v${i % 3}`) })).toBe(6); // not numbers only
  });

  it.each([3, 4] as const)('round-trips records of changing shape exactly whatever the groups, key order included (version %i)', (version) => {
    fc.assert(
      fc.property(timedColumns, fc.integer({ min: 1, max: 6 }), ({ ts, fields }, groupRows) => {
        const { bytes, entry } = segment(ts, fields, groupRows, version);
        const out = decodeSegment(bytes).series[0]!;
        expect(ordered(out.ts)).toBe(ordered(ts));
        for (const [name, col] of Object.entries(fields)) expect(ordered(out.fields[name])).toBe(ordered(col));
        expect(Object.keys(out.fields).sort()).toEqual(Object.keys(fields).sort());
        expect(entry.fields).toEqual(Object.keys(fields).sort());
        const g = entry.directory!.layout.groups;
        if (g) expect(g.slots.length).toBeGreaterThanOrEqual(2);
        // Version 3 without groups is version 2's bytes; version 4 stays 4 (its numbers may be float32 decimals).
        expect(decodeSegment(bytes).footer.version).toBe(version === 3 && !g ? 2 : version);
      }),
      { numRuns: 300 },
    );
  });

  it('reads the numbers of every group without the members of records, as rollups do', () => {
    const numbers = (col: readonly FieldValue[]) => col.map((v) => (typeof v === 'number' ? v : null));
    fc.assert(
      fc.property(timedColumns, fc.integer({ min: 1, max: 6 }), ({ ts, fields }, groupRows) => {
        const { bytes, entry } = segment(ts, fields, groupRows);
        const parts = groupsOf(entry).map((g) => numberColumns(g < 0 ? decodeBlockColumns(bytes, entry, ROOTS_ONLY, 0) : decodeGroupColumns(bytes, entry, g, ROOTS_ONLY, 0)));
        expect(parts.flatMap((p) => p.ts)).toEqual(ts);
        for (const [name, col] of Object.entries(fields)) expect(numbers(parts.flatMap((p) => p.fields[name]!))).toEqual(numbers(col));
      }),
      { numRuns: 300 },
    );
  });

  it('a range reads exactly its records from the groups it overlaps, fetching only their bytes, whatever edge it cuts', () => {
    fc.assert(
      fc.property(
        timedColumns.filter((d) => d.ts.length >= 2),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(-1, 0, 1),
        fc.constantFrom(-1, 0, 1),
        fc.boolean(),
        ({ ts, fields }, groupRows, a, b, da, db, project) => {
          const { bytes, entry } = segment(ts, fields, groupRows);
          // Bounds on samples (± 1 ms) and on slot edges, so that ranges start and end in, before and after every group.
          const g = entry.directory!.layout.groups;
          const edges = [...ts, ...(g ? g.slots.map((s) => (Math.floor(entry.minTs / g.span) + s) * g.span) : [])];
          let from = edges[a % edges.length]! + da;
          let to = edges[b % edges.length]! + db;
          if (from > to) [from, to] = [to, from];
          const names = Object.keys(fields);
          const paths = project && names.length > 0 ? [names[0]!] : undefined;
          const got = readRange(bytes, entry, from, to, paths);
          const lo = lowerBound(ts, from);
          const hi = lowerBound(ts, to);
          expect(ordered(got.ts)).toBe(ordered(ts.slice(lo, hi)));
          for (const name of paths ?? names) expect(ordered(got.fields[name] ?? [])).toBe(ordered(hi > lo ? fields[name]!.slice(lo, hi) : []));
          if (g) {
            // Every group read overlaps the range, and none holding a sample of it was left out.
            for (const i of got.groups) {
              const start = (Math.floor(entry.minTs / g.span) + g.slots[i]!) * g.span;
              expect(start < to && start + g.span > from).toBe(true);
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('splits an hour of 1 Hz records into 10-minute groups: a 10-minute read decodes a sixth of the block', () => {
    const { ts: ts0, records } = gpsRecords(3600);
    const ts = ts0.map((_, i) => H + i * 1000 + 317);
    const fields = toColumns(records) as Record<string, FieldValue[]>;
    const { bytes, entry } = segment(ts, fields, 512);
    const g = entry.directory!.layout.groups!;
    expect(g.span).toBe(600_000);
    expect(g.slots).toEqual([0, 1, 2, 3, 4, 5]);
    const from = H + 20 * 60_000;
    expect(groupsOf(entry, from, from + 600_000)).toEqual([2]);
    const ranges = groupsOf(entry, from, from + 600_000).flatMap((i) => columnRanges(entry, undefined, i));
    const read = ranges.reduce((n, r) => n + r.length, 0);
    expect(read).toBeLessThan(entry.length / 5);
    const got = readRange(bytes, entry, from, from + 600_000);
    expect(got.ts.length).toBe(600);
    expect(JSON.stringify(got.fields['imu']![0])).toBe(JSON.stringify(records[1200]!['imu']));
    // A version 2 block of the same records, for the bytes at rest.
    const v2 = encodeSegment({ ns: 'n', shard: 0, window: H, series: [{ id: 's', metric: 'm', tags: {}, ts, fields }] }, { version: 2 });
    console.log(`GPS records (3,600): version 2 ${(v2.length / 3600).toFixed(1)} bytes/record, version 3 ${(bytes.length / 3600).toFixed(1)}`);
    expect(bytes.length).toBeLessThan(v2.length * 1.15);
  });

  it('splits a day of 1 Hz samples (a day object) into 2-hour groups: at most about twelve per block', () => {
    const day = H - (H % 86_400_000);
    const ts = Array.from({ length: 86_400 }, (_, i) => day + i * 1000);
    const { entry } = segment(ts, { value: ts.map((_, i) => i % 97) }, 512);
    const g = entry.directory!.layout.groups!;
    expect(g.span).toBe(2 * 3_600_000);
    expect(g.slots).toHaveLength(12);
    expect(groupsOf(entry, day + 5 * 3_600_000, day + 5 * 3_600_000 + 600_000)).toEqual([2]);
  });

  it('keeps small blocks and whole segments of them as version 2, byte for byte (version 3)', () => {
    const { ts, records } = gpsRecords(300);
    const input = { ns: 'n', shard: 0, window: H, series: [{ id: 's', metric: 'm', tags: {}, ts, fields: toColumns(records) as Record<string, FieldValue[]> }] };
    expect(Buffer.from(encodeSegment(input, { version: 3 })).equals(encodeSegment(input, { version: 2 }))).toBe(true);
  });

  it('a series index carries row-grouped layouts through', () => {
    const { bytes, entry } = segment(
      Array.from({ length: 100 }, (_, i) => H + i * 1000),
      { v: Array.from({ length: 100 }, (_, i) => ({ a: i, b: [i, 'x'] })) },
      10,
    );
    expect(entry.directory!.layout.groups).toBeDefined();
    const index = decodeSeriesIndex(encodeSeriesIndex({ ns: 'n', shard: 0, day: H - (H % 86_400_000), parts: [{ key: 'k', window: H, series: [entry] }] }));
    const back = indexedEntry(index, index.parts[0]!, 0);
    expect(back.directory).toEqual(entry.directory);
    const got = readRange(bytes, back, H + 30_000, H + 45_000);
    expect(got.ts).toEqual(Array.from({ length: 15 }, (_, i) => H + 30_000 + i * 1000));
  });

  it('detects every flipped byte of a group read, never returns wrong data', () => {
    const { records } = gpsRecords(200);
    const ts = records.map((_, i) => H + i * 1000);
    const { bytes, entry } = segment(ts, toColumns(records) as Record<string, FieldValue[]>, 50);
    const from = H + 60_000;
    const ranges = groupsOf(entry, from, from + 60_000).flatMap((g) => columnRanges(entry, undefined, g));
    expectFlipsDetected(bytes, ranges, (b) => ordered(readRange(b, entry, from, from + 60_000)));
  });
});
