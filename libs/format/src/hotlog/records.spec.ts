import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LimitError, type FieldValue, type SeriesColumns } from '@s4/core';
import { canon } from '../testing/exact-json.js';
import { msgpack } from '../msgpack.js';
import { decodeFooter, encodeSegment, readTrailer, SEGMENT_TRAILER_BYTES, type ShredMode } from '../index.js';
import { nestedColumns } from '../testing/arbitraries.js';
import { gpsRecords, toColumns } from '../testing/gps.js';
import { PackedValue, decodeRecordBytes } from './packed.js';
import { RecordEncoder, decodeRecords, decodeRecordsGeneric, decodeRecordsToEncode } from './records.js';

/** One hot-tier append: samples of one series-window as columns, as the writer hands them over. */
interface Append {
  ts: number[];
  names: string[];
  columns: FieldValue[][];
}

/** The writer's use of the encoder (libs/engine Writer.encode): one batch when it can, else one record a sample. */
function encode(enc: RecordEncoder, appends: readonly Append[]): Uint8Array {
  for (const a of appends) {
    const indexes = a.ts.map((_, i) => i);
    if (!enc.batch(a.ts, a.names, a.columns, indexes)) {
      const keys = enc.keysOf(a.names);
      for (const i of indexes) enc.record(a.ts[i]!, keys, a.columns, i, 'm');
    }
  }
  return enc.take();
}

/**
 * What a log of these appends reads back as: every sample in arrival order, null where a field is
 * absent. A column that is absent throughout means the same as no column (a batch keeps it, a
 * record leaves it out), so both sides are compared without such columns.
 */
function expected(appends: readonly Append[]): SeriesColumns {
  const names = [...new Set(appends.flatMap((a) => a.names))];
  const out = { ts: appends.flatMap((a) => a.ts), fields: Object.fromEntries(names.map((n) => [n, [] as FieldValue[]])) };
  for (const a of appends)
    for (const n of names) {
      const c = a.names.indexOf(n);
      for (let i = 0; i < a.ts.length; i++) out.fields[n]!.push(c < 0 ? null : (a.columns[c]![i] ?? null));
    }
  return present(out);
}

function present(c: SeriesColumns): SeriesColumns {
  return { ts: c.ts, fields: Object.fromEntries(Object.entries(c.fields).filter(([, col]) => col.some((v) => v !== null))) };
}

// Nested values travel through the pinned MessagePack encoder, which writes -0 as 0 and cannot
// keep a `__proto__` key (README.md); the validator refuses `__proto__`, so neither is generated.
const nested = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('"__proto__"')).map((v) => JSON.parse(JSON.stringify(v)) as FieldValue);
const number = fc.oneof(
  fc.double(),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.constantFrom(-0, 0, NaN, Infinity, -Infinity, 2 ** 31, -(2 ** 31) - 1, 5e-324),
);
const value: fc.Arbitrary<FieldValue> = fc.oneof(number, fc.boolean(), fc.string({ maxLength: 8 }), nested);
const fieldName = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('value', '10', '9', 'constructor', 'toString', 'a'.repeat(40))).filter((n) => n !== '__proto__');

const append: fc.Arbitrary<Append> = fc
  .tuple(fc.integer({ min: 1, max: 5 }), fc.uniqueArray(fieldName, { maxLength: 20 }), fc.boolean())
  .chain(([n, names, numeric]) =>
    fc.record({
      ts: fc.array(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), { minLength: n, maxLength: n }),
      names: fc.constant(names),
      columns: fc.tuple(...names.map(() => fc.array(fc.option(numeric ? number : value, { nil: null, freq: 3 }), { minLength: n, maxLength: n }))),
    }),
  );

/** A batch column with an absent value is a plain MessagePack array, where -0 turns into 0 (see the known issue below). */
const losesNegativeZero = (a: Append) =>
  a.ts.length >= 2 &&
  a.columns.every((c) => c.every((v) => v === null || typeof v === 'number')) &&
  a.columns.some((c) => c.includes(null) && c.some((v) => Object.is(v, -0)));

describe('hot-log records', () => {
  it('round-trip: a log reads back as every sample in arrival order, values exact', () => {
    fc.assert(
      fc.property(fc.array(append, { maxLength: 6 }), (appends) => {
        fc.pre(!appends.some(losesNegativeZero));
        const bytes = encode(new RecordEncoder(1 << 20), appends);
        expect(canon(present(decodeRecords(bytes)))).toBe(canon(expected(appends)));
      }),
    );
  });

  it('reads records of numbers (and other scalars) straight from the bytes exactly as the general path reads them, or leaves the log to it', () => {
    const same = (bytes: Uint8Array) => {
      const fast = decodeRecordBytes(bytes, false);
      if (fast === null) return false;
      const slow = decodeRecordsGeneric(bytes);
      expect(canon(fast)).toBe(canon(slow));
      expect(Object.keys(fast.fields)).toEqual(Object.keys(slow.fields));
      return true;
    };
    // The writer's logs: records and batches of every kind of value.
    fc.assert(fc.property(fc.array(append, { maxLength: 6 }), (appends) => void same(encode(new RecordEncoder(1 << 20), appends))));
    // Records by any MessagePack writer: every integer width, floats, names of any length and text, repeated or missing.
    const int = fc.oneof(fc.integer({ min: -40, max: 300 }), fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }), fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }));
    const record = fc.tuple(fc.oneof(int, fc.double()), fc.array(fc.tuple(fc.oneof(fieldName, fc.constantFrom('value', 'v', 'é')), fc.option(fc.oneof(int, fc.double()), { nil: null, freq: 20 })), { maxLength: 5 }));
    let fast = 0;
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), (records) => {
        const bytes = Buffer.concat(records.map(([t, kv]) => msgpack.pack([t, Object.fromEntries(kv)])));
        if (same(bytes)) fast++;
      }),
      { numRuns: 500 },
    );
    // Not a test that passes by leaving everything to the general path.
    expect(fast).toBeGreaterThan(100);
    const metric = new RecordEncoder(1 << 10);
    for (let i = 0; i < 6; i++) metric.recordOf(1_767_225_600_000 + i * 10_000, { value: [i === 3 ? -0 : i * 1.25 - 2] }, 0, 'm');
    expect(same(metric.take())).toBe(true);
    // A name twice in one record (another writer's map): the later value wins, as msgpackr reads it.
    const twice = Buffer.from([0x92, 0x01, 0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02]);
    expect(decodeRecordBytes(twice, false)).toBe(null);
    expect(canon(decodeRecords(twice))).toBe(canon({ ts: [1], fields: { a: [2] } }));
  });

  it('reads records with nested values packed exactly as the general path reads them, or leaves the log to it', () => {
    let packed = 0;
    fc.assert(
      fc.property(fc.array(append, { maxLength: 6 }), (appends) => {
        const bytes = encode(new RecordEncoder(1 << 20), appends);
        const got = decodeRecordBytes(bytes, true);
        if (got === null) return;
        const fields = Object.fromEntries(Object.entries(got.fields).map(([k, col]) => [k, col.map((v) => (v instanceof PackedValue ? (packed++, v.unpack()) : v))]));
        const slow = decodeRecordsGeneric(bytes);
        expect(canon({ ts: got.ts, fields })).toBe(canon(slow));
        expect(Object.keys(fields)).toEqual(Object.keys(slow.fields));
      }),
      { numRuns: 500 },
    );
    // Not a test that passes by leaving everything to the general path.
    expect(packed).toBeGreaterThan(100);
    // Every header size: strings of 8, 16 and 32-bit lengths, arrays and maps of 16-bit and 32-bit counts.
    const wide: FieldValue = { s: 'x'.repeat(300), u: 'é'.repeat(40_000), a: new Array<FieldValue>(20).fill(1.5), m: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, [i]])), big: new Array<FieldValue>(70_000).fill(true) };
    const enc = new RecordEncoder(1 << 24);
    enc.recordOf(5, { w: [wide], top: ['y'.repeat(70_000)] }, 0, 'm');
    const bytes = enc.take();
    const got = decodeRecordBytes(bytes, true)!;
    expect(got.fields.w![0]).toBeInstanceOf(PackedValue);
    expect(canon({ ts: got.ts, fields: { w: [(got.fields.w![0] as unknown as PackedValue).unpack()], top: got.fields.top } })).toBe(canon(decodeRecordsGeneric(bytes)));
  });

  it.each<ShredMode>(['auto', 'always', 'never'])('a segment encoded from packed nested values is the one encoded from decoded values, byte for byte (shred %s)', (shred) => {
    const segmentOf = (ts: readonly number[], bytes: Uint8Array, decode: (b: Uint8Array) => SeriesColumns) => {
      const cols = decode(bytes);
      expect(cols.ts).toEqual(ts);
      return encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'm', tags: {}, ts: cols.ts, fields: cols.fields }] }, { shred });
    };
    const logOf = (ts: readonly number[], fields: Record<string, readonly FieldValue[]>) => {
      const enc = new RecordEncoder(1 << 24);
      for (let i = 0; i < ts.length; i++) enc.recordOf(ts[i]!, fields, i, 'm');
      return enc.take();
    };
    const same = (ts: number[], fields: Record<string, FieldValue[]>) => {
      const bytes = logOf(ts, fields);
      const a = segmentOf(ts, bytes, decodeRecordsToEncode);
      expect(Buffer.from(a).equals(Buffer.from(segmentOf(ts, bytes, decodeRecords)))).toBe(true);
      return a;
    };
    fc.assert(
      fc.property(nestedColumns(40), ({ ts, fields }) => void same(ts, fields)),
      { numRuns: 300 },
    );
    // Headers of every size: 8 and 16-bit string lengths, 16-bit array and map counts.
    const wide = (i: number): FieldValue => ({ s: 'x'.repeat(300 + i), u: 'é'.repeat(200), a: new Array<FieldValue>(20).fill(i), m: Object.fromEntries(Array.from({ length: 17 }, (_, k) => [`k${k}`, [k + i]])) });
    same([1, 2, 3], { w: [wide(0), wide(1), wide(2)] });
    // An hour of realistic records: shredded in every mode but never.
    const { ts, records } = gpsRecords(3600);
    const seg = same(ts, toColumns(records) as Record<string, FieldValue[]>);
    const { footerOffset, footerLength } = readTrailer(seg.subarray(seg.length - SEGMENT_TRAILER_BYTES));
    const entry = decodeFooter(seg.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
    expect(entry.directory!.layout.chunks.flat().some((c) => c.path.includes('.'))).toBe(shred !== 'never');
  });

  it('writes a nested value byte for byte as msgpackr packs it', () => {
    const text = fc.oneof(fc.string({ maxLength: 70 }), fc.string({ unit: 'grapheme', maxLength: 70 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('x'.repeat(31), 'é'.repeat(16), 'é'.repeat(128), '\ud800'.repeat(90), 'a'.repeat(70_000)));
    const num = fc.oneof(number, fc.integer({ min: -70_000, max: 70_000 }), fc.constantFrom(127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, -32, -33, -128, -129, -32_768, -32_769));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, num, fc.boolean(), text, fc.constant(null), tie('arr'), tie('obj')),
      arr: fc.oneof(fc.array(tie('tree'), { maxLength: 5 }), fc.constant(Array.from({ length: 17 }, (_, i) => i))),
      obj: fc.dictionary(fc.oneof(text, fc.constantFrom('10', '2', 'constructor')), tie('tree'), { maxKeys: 5 }),
    }));
    const deep = (d: number): FieldValue => (d === 0 ? 1 : [deep(d - 1)]);
    // Inside an array: a field's own null is left out, and its own number is written by the record's rules.
    const check = (inner: FieldValue) => {
      const v = [inner];
      const enc = new RecordEncoder(1 << 24);
      enc.record(1, enc.keysOf(['f']), [[v]], 0, 'm');
      // [ts float64, {"f": value}]: 1 + 9 + 1 + 2 bytes before the value
      expect(Buffer.from(enc.take().subarray(13)).equals(Buffer.from(msgpack.pack(v)))).toBe(true);
    };
    fc.assert(fc.property(fc.oneof(tree, fc.array(tree, { maxLength: 3 })), (v) => check(v as FieldValue)), { numRuns: 1000 });
    for (const v of [deep(100), { a: new Array(70_000).fill(0) }, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]))]) check(v);
  });

  it('is cut only at value boundaries: any prefix of whole appends decodes on its own', () => {
    fc.assert(
      fc.property(fc.array(append, { minLength: 1, maxLength: 4 }), (appends) => {
        fc.pre(!appends.some(losesNegativeZero));
        const enc = new RecordEncoder(1 << 20);
        const parts = appends.map((a) => encode(enc, [a]));
        const joined = Buffer.concat(parts);
        let at = 0;
        parts.forEach((p, i) => {
          at += p.length;
          expect(canon(present(decodeRecords(joined.subarray(0, at))))).toBe(canon(expected(appends.slice(0, i + 1))));
        });
      }),
    );
  });

  it('writes plain MessagePack that decodes to the same samples, absent fields left out', () => {
    const enc = new RecordEncoder(1 << 16);
    const names = ['i', 'f', 's', 'n', 'neg0', 'big', 'nested'];
    const columns: FieldValue[][] = [
      [1, -2_147_483_648, 2_147_483_647],
      [1.5, Number.NaN, -Infinity],
      ['a', null, 'ü'],
      [null, null, true],
      [-0, 0, -0],
      [2 ** 40, -(2 ** 53 - 1), 3e300],
      [{ a: [1, { b: null }] }, [], null],
    ];
    const ts = [0, 1_767_225_600_000, Number.MAX_SAFE_INTEGER];
    const keys = enc.keysOf(names);
    ts.forEach((t, i) => enc.record(t, keys, columns, i, 'm'));
    expect(canon(decodeRecords(enc.take()))).toBe(canon({ ts, fields: Object.fromEntries(names.map((n, c) => [n, columns[c]])) }));
  });

  it('writes all-number appends as one batch, read back in arrival order with later records', () => {
    const enc = new RecordEncoder(1 << 16);
    expect(enc.batch([5, 1, 5], ['v', 'w'], [[1.5, Number.NaN, -0], [null, 2, null]], [0, 1, 2])).toBe(true);
    expect(enc.batch([1, 2], ['s'], [['x', 'y']], [0, 1])).toBe(false);
    expect(enc.batch([1], ['v'], [[1]], [0])).toBe(false);
    enc.record(7, enc.keysOf(['s']), [['z']], 0, 'm');
    const out = decodeRecords(enc.take());
    expect(canon(out)).toBe(canon({ ts: [5, 1, 5, 7], fields: { v: [1.5, NaN, -0, null], w: [null, 2, null, null], s: [null, null, null, 'z'] } }));
  });

  it('recordOf (one walk over a map of columns) writes the bytes record writes, 16 fields or more included', () => {
    const many = fc.uniqueArray(fieldName, { maxLength: 20 });
    fc.assert(
      fc.property(
        many.chain((names) => fc.tuple(fc.constant(names), fc.tuple(...names.map(() => fc.option(value, { nil: null, freq: 4 }))), fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.nat(3))),
        ([names, row, ts, before]) => {
          const a = new RecordEncoder(1 << 20);
          const b = new RecordEncoder(1 << 20);
          // Records already pending in the encoder (its count is written relative to them).
          for (let k = 0; k < before; k++) {
            a.record(k, a.keysOf(['x']), [['y'.repeat(700)]], 0, 'm');
            b.record(k, b.keysOf(['x']), [['y'.repeat(700)]], 0, 'm');
          }
          const map = Object.create(null) as Record<string, FieldValue[]>;
          names.forEach((n, c) => (map[n] = [row[c]!]));
          a.recordOf(ts, map, 0, 'm');
          b.record(ts, b.keysOf(Object.keys(map)), Object.values(map), 0, 'm');
          expect(Buffer.from(a.take()).toString('hex')).toBe(Buffer.from(b.take()).toString('hex'));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('refuses a record above the limit, naming the setting', () => {
    const enc = new RecordEncoder(100);
    expect(() => enc.record(1, enc.keysOf(['s']), [['x'.repeat(200)]], 0, 'm')).toThrow(LimitError);
    expect(() => enc.record(1, enc.keysOf(['s']), [['x'.repeat(200)]], 0, 'm')).toThrow(/S4_MAX_RECORD_BYTES=100/);
  });

  it('decodes an empty log to no samples', () => {
    expect(canon(decodeRecords(new Uint8Array(0)))).toBe(canon({ ts: [], fields: {} }));
  });

  // Known issue (hot-log.md): in a batch column that also has an absent value, -0 is written as
  // the integer 0. Fixing it changes the bytes writers produce; this test flips when it is fixed.
  it.fails('keeps -0 in a batch column that has an absent value', () => {
    const enc = new RecordEncoder(1 << 16);
    enc.batch([1, 2], ['v'], [[-0, null]], [0, 1]);
    expect(Object.is(decodeRecords(enc.take()).fields.v![0], -0)).toBe(true);
  });
});
