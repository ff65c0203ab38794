import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectFlipsDetected } from '../testing/corruption.js';
import type { FieldValue } from '@s4/core';
import { assemble, columnRanges, columnWriter, decodeBlock, decodeBlockColumns, decodeFooter, decodeSegment, encodeSegment, formatProjectionPath, numberColumns, projectColumns, readTrailer, ROOTS_ONLY, SEGMENT_TRAILER_BYTES } from '../index.js';
import { keyPaths, nestedColumns } from '../testing/arbitraries.js';
import { ordered } from '../testing/exact-json.js';
import { gpsRecords, toColumns } from '../testing/gps.js';
import { JsonBytes } from '../shred/json-bytes.js';
import type { BlockColumns, ShredMode } from './block-v2.js';

/** Each sample's JSON text of a field as columnWriter writes it ("null" where it writes nothing). */
function columnJson(cols: BlockColumns, name: string): string[] {
  const next = columnWriter(cols, name);
  return cols.ts.map(() => {
    const out = new JsonBytes(64);
    return next(out, new Uint8Array(0)) ? Buffer.concat(out.end()).toString('utf8') : 'null';
  });
}

/** One series in a v2 segment; returns the object and its footer entry. */
function segment(ts: number[], fields: Record<string, FieldValue[]>, shred: ShredMode = 'auto') {
  const bytes = encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'm', tags: {}, ts, fields }] }, { shred });
  const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
  const entry = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
  return { bytes, entry };
}

const columnsOf = (fields: Record<string, FieldValue[]>) => ordered(Object.fromEntries(Object.keys(fields).sort().map((k) => [k, fields[k]])));

/** Projection paths: some of the data's own key paths, some field names, and some that match nothing. */
const pathsFor = (fields: Record<string, FieldValue[]>) => {
  const all: string[] = [];
  for (const [name, col] of Object.entries(fields)) {
    all.push(formatProjectionPath([name]));
    for (const v of col) for (const p of keyPaths(v)) all.push(formatProjectionPath([name, ...p]));
  }
  return fc.uniqueArray(fc.oneof(fc.constantFrom(...(all.length > 0 ? all : ['none'])), fc.constantFrom('none', 'a.zz', 'a.b.c')), { minLength: 1, maxLength: 4 });
};

/** Copies only the given ranges of `bytes` into a buffer of garbage: a reader must not need the rest. */
function onlyRanges(bytes: Uint8Array, ranges: { offset: number; length: number }[]): Uint8Array {
  const out = new Uint8Array(bytes.length).fill(0xa5);
  for (const r of ranges) out.set(bytes.subarray(r.offset, r.offset + r.length), r.offset);
  return out;
}

describe('block v2: shredded nested records', () => {
  it.each<ShredMode>(['always', 'auto', 'never'])('round-trips records of changing shape exactly, key order included (shred %s)', (shred) => {
    fc.assert(
      fc.property(nestedColumns(), ({ ts, fields }) => {
        const { bytes, entry } = segment(ts, fields, shred);
        const out = decodeSegment(bytes).series[0]!;
        expect(ordered(out.ts)).toBe(ordered(ts));
        expect(columnsOf(out.fields)).toBe(columnsOf(fields));
        for (const [name, col] of Object.entries(fields)) {
          expect(out.fields[name]!.map((v) => JSON.stringify(v))).toEqual(col.map((v) => JSON.stringify(v)));
        }
        expect(entry.fields).toEqual(Object.keys(fields).sort());
      }),
      { numRuns: 300 },
    );
  });

  it.each<ShredMode>(['always', 'auto'])('projects by path exactly as the naive projection of whole records (shred %s)', (shred) => {
    fc.assert(
      fc.property(
        nestedColumns().chain((data) => fc.tuple(fc.constant(data), pathsFor(data.fields))),
        ([{ ts, fields }, paths]) => {
          const { bytes, entry } = segment(ts, fields, shred);
          const want = projectColumns({ ts, fields }, paths);
          // Only the ranges columnRanges names are readable: the rest of the object is garbage.
          const cols = decodeBlockColumns(onlyRanges(bytes, columnRanges(entry, paths)), entry, paths, 0);
          const got = assemble(cols);
          expect(ordered(got.ts)).toBe(ordered(ts));
          expect(ordered(got.fields)).toBe(ordered(want.fields));
          for (const name of Object.keys(want.fields)) {
            expect(columnJson(cols, name)).toEqual(want.fields[name]!.map((v) => JSON.stringify(v)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each<ShredMode>(['always', 'auto', 'never'])('reads the numbers of every field without the members of records (shred %s)', (shred) => {
    fc.assert(
      fc.property(nestedColumns(), ({ ts, fields }) => {
        const { bytes, entry } = segment(ts, fields, shred);
        const cols = decodeBlockColumns(bytes, entry, ROOTS_ONLY, 0);
        for (const f of cols.fields.values()) if (f.kind === 'shredded') expect(f.root.children.size).toBe(0);
        const got = numberColumns(cols);
        expect(got.ts).toEqual(ts);
        expect(Object.keys(got.fields).sort()).toEqual(Object.keys(fields).sort());
        const numbers = (col: readonly FieldValue[]) => col.map((v) => (typeof v === 'number' ? v : null));
        for (const [name, col] of Object.entries(fields)) expect(numbers(got.fields[name]!)).toEqual(numbers(col));
      }),
      { numRuns: 300 },
    );
  });

  it('projects version 1 blocks the same way (old data is read whole, then projected)', () => {
    fc.assert(
      fc.property(
        nestedColumns().chain((data) => fc.tuple(fc.constant(data), pathsFor(data.fields))),
        ([{ ts, fields }, paths]) => {
          const bytes = encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'm', tags: {}, ts, fields }] }, { version: 1 });
          const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
          const entry = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
          expect(entry.directory).toBeUndefined();
          expect(columnRanges(entry, paths)).toEqual([{ offset: entry.offset, length: entry.length }]);
          const got = assemble(decodeBlockColumns(bytes, entry, paths, 0));
          expect(ordered(got.fields)).toBe(ordered(projectColumns({ ts, fields }, paths).fields));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('keeps each case that breaks naive shredders', () => {
    const proto = JSON.parse('{"__proto__":{"x":1},"a":2}') as FieldValue;
    const cases: FieldValue[] = [
      { a: 1, b: 2 },
      { b: 3, a: 4 },
      { a: null },
      {},
      { a: [] },
      { a: [[], [1, 'x', null, { b: -0 }]] },
      { a: { b: NaN } },
      { a: 'now a string' },
      { 'x.y': 1, '[]': 2, 'a\\b': 3, '.': 4, 'ü😀': 5 },
      { '10': 1, '9': 2, b: 3 },
      proto,
      [],
      [{}],
      -0,
      null,
    ];
    const ts = cases.map((_, i) => i);
    const { bytes } = segment(ts, { f: cases }, 'always');
    const out = decodeSegment(bytes).series[0]!.fields['f']!;
    expect(ordered(out)).toBe(ordered(cases));
    expect(Object.keys(out[10]!)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(out[10])).toBe(Object.prototype);
  });

  it('names shredded columns by escaped path and projects with implicit array steps', () => {
    const records: FieldValue[] = [
      { sats: [{ prn: 1, snr: 40 }, { prn: 2 }, 7], 'a.b': { c: true } },
      { sats: [[{ prn: 3, snr: 41 }]], 'a.b': { c: false } },
      { sats: 'none' },
    ];
    const { bytes, entry } = segment([1, 2, 3], { r: records }, 'always');
    const paths = entry.directory!.layout.chunks.flatMap((c) => c.map((col) => col.path));
    expect(paths).toEqual(expect.arrayContaining(['r', 'r.sats', 'r.sats[]', 'r.sats[].prn', 'r.sats[][]', 'r.sats[][].snr', 'r.a\\.b', 'r.a\\.b.c']));
    const got = assemble(decodeBlockColumns(bytes, entry, ['r.sats.prn', 'r.a\\.b'], 0)).fields['r'];
    expect(got).toEqual([{ sats: [{ prn: 1 }, { prn: 2 }], 'a.b': { c: true } }, { sats: [[{ prn: 3 }]], 'a.b': { c: false } }, {}]);
  });

  it('a field name with dots is selected whole by its own name', () => {
    const { bytes, entry } = segment([1], { 'cpu.user': [1.5], cpu: [{ user: 2 }] }, 'always');
    expect(assemble(decodeBlockColumns(bytes, entry, ['cpu.user'], 0)).fields).toEqual({ 'cpu.user': [1.5] });
    expect(assemble(decodeBlockColumns(bytes, entry, ['cpu.user', 'cpu.nothing'], 0)).fields).toEqual({ 'cpu.user': [1.5], cpu: [{}] });
  });

  it('falls back to the whole-value encoding when shapes are too irregular to pay', () => {
    // Every record has its own keys: shredding would be one column per key and a shape per record.
    const col = Array.from({ length: 200 }, (_, i) => ({ [`k${i}`]: i, [`j${i}`]: `v${i}` }));
    const { entry } = segment(col.map((_, i) => i), { f: col });
    const roles = entry.directory!.layout.chunks.flatMap((c) => c.map((x) => [x.path, x.role]));
    expect(roles.sort()).toEqual([['', 0], ['f', 1]]);
    const regular = Array.from({ length: 200 }, (_, i) => ({ a: i, b: `v${i % 3}` }));
    const shredded = segment(regular.map((_, i) => i), { f: regular }).entry;
    expect(shredded.directory!.layout.chunks.flatMap((c) => c.map((x) => x.path)).sort()).toEqual(['', 'f', 'f.a', 'f.b']);
  });

  it('detects every flipped byte of a projected read, never returns wrong data', () => {
    const { ts, records } = gpsRecords(40);
    const fields = toColumns(records) as Record<string, FieldValue[]>;
    const { bytes, entry } = segment(ts, fields);
    const paths = ['sats.prn', 'imu.vibration'];
    const ranges = columnRanges(entry, paths);
    expectFlipsDetected(bytes, ranges, (b) => ordered(assemble(decodeBlockColumns(b, entry, paths, 0)).fields));
  });

  it('stores realistic GPS records in well under the bytes of version 1, and a projection reads a fraction', () => {
    const { ts, records } = gpsRecords(300);
    const fields = toColumns(records) as Record<string, FieldValue[]>;
    const input = { ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'gps', tags: {}, ts, fields }] };
    const v1 = encodeSegment(input, { version: 1 }).length / 300;
    const { bytes, entry } = segment(ts, fields);
    const v2 = bytes.length / 300;
    console.log(`GPS records (300): version 1 ${v1.toFixed(1)} bytes/record, version 2 ${v2.toFixed(1)} bytes/record`);
    expect(v2).toBeLessThan(100);
    expect(v2).toBeLessThan(v1 * 0.6);
    const projected = columnRanges(entry, ['imu.vibration.rms']).reduce((a, r) => a + r.length, 0);
    expect(projected).toBeLessThan(entry.length / 8);
    const back = decodeBlock(bytes.subarray(entry.offset, entry.offset + entry.length), entry);
    records.forEach((r, i) => {
      const rebuilt = Object.fromEntries(Object.keys(r).map((k) => [k, back.fields[k]![i]]));
      expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(r));
    });
  });
});
