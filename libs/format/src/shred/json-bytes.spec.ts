import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { assemble, columnWriter, decodeBlockColumns, decodeFooter, encodeSegment, readTrailer, SEGMENT_TRAILER_BYTES, type ShredMode } from '../index.js';
import { nestedValue } from '../testing/arbitraries.js';
import { JsonBytes } from './json-bytes.js';

const utf8 = (out: JsonBytes) => Buffer.concat(out.end()).toString('utf8');

/** Numbers of every kind the writer tells apart, the edges of each included. */
const number = fc.oneof(
  fc.double(),
  fc.double({ noNaN: true }).map(Math.fround),
  fc.integer(),
  fc.integer({ min: -100_000, max: 100_000 }).map((x) => x / 10),
  fc.maxSafeInteger(),
  fc.integer({ min: 0, max: 2 ** 45 }).map((x) => x * 1000 + 1_700_000_000_000),
  fc.constantFrom(-0, 0, NaN, Infinity, -Infinity, 5e-324, -5e-324, 1e21, -1e21, 1e20, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 53, -(2 ** 53), 2 ** 53 - 1, 1e-7, 1.5e-7, 123456789.5, 0.1 + 0.2, Number.MAX_VALUE, -Number.MAX_VALUE),
);

describe('JsonBytes', () => {
  it('writes numbers as JSON.stringify does (NaN and ±Infinity as null, -0 as 0), the same values again from its table', () => {
    fc.assert(
      fc.property(fc.array(number, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 3 }), (values, rounds) => {
        const out = new JsonBytes(64);
        for (let r = 0; r < rounds; r++)
          for (const [i, v] of values.entries()) {
            if (i > 0 || r > 0) out.byte(0x2c);
            out.number(v);
          }
        const want = Array.from({ length: rounds }, () => values.map((v) => JSON.stringify(v)).join(',')).join(',');
        expect(utf8(out)).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('never gives one double the text of another that shares its table slot', () => {
    // Far more distinct values than the table has slots, each written twice in a row and once again later.
    const values = Array.from({ length: 200_000 }, (_, i) => Math.fround(i * 0.37 + 0.01) + (i % 7) * 1e-9);
    const out = new JsonBytes();
    for (const v of values) {
      out.number(v);
      out.number(v);
      out.byte(0x20);
    }
    for (const v of values) {
      out.number(v);
      out.byte(0x20);
    }
    const want = values.map((v) => `${JSON.stringify(v)}${JSON.stringify(v)}`).join(' ') + ' ' + values.map((v) => JSON.stringify(v)).join(' ') + ' ';
    expect(utf8(out)).toBe(want);
  });

  it('writes strings as JSON.stringify does: escapes, unicode, lone surrogates', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 8 }), fc.constantFrom('', '"', '\\', '\n', '\u0000', '\ud800', 'ü', '😀', 'x'.repeat(300))), { maxLength: 20 }), (strs) => {
        const out = new JsonBytes(16);
        for (const s of strs) out.string(s);
        for (const s of strs) out.text(JSON.stringify(s));
        const want = strs.map((s) => JSON.stringify(s)).join('');
        expect(utf8(out)).toBe(want + want);
      }),
      { numRuns: 500 },
    );
  });

  it('hands out pieces of about the size asked for, every byte once, in order', () => {
    const out = new JsonBytes(100);
    const got: Uint8Array[] = [];
    let want = '';
    for (let i = 0; i < 5000; i++) {
      out.number(i * 1.25);
      out.string(`s${i}ü`);
      want += `${JSON.stringify(i * 1.25)}${JSON.stringify(`s${i}ü`)}`;
      if (out.ready) for (const p of out.take()) got.push(p);
    }
    got.push(...out.end());
    expect(got.length).toBeGreaterThan(100);
    for (const p of got.slice(0, -1)) expect(p.length).toBeGreaterThanOrEqual(100 - 64);
    expect(Buffer.concat(got).toString('utf8')).toBe(want);
  });

  it('writes shredded and whole fields (float32 and repeating values included) as JSON.stringify of their values', () => {
    const sensor = fc.oneof(number, fc.integer({ min: 0, max: 50 }).map((k) => Math.fround(k / 10)));
    const value = fc.oneof(nestedValue(fc.constantFrom('a', 'b', 'ü', '"q"')), fc.record({ lat: sensor, sats: fc.array(fc.record({ prn: fc.integer({ min: 1, max: 32 }), snr: sensor }), { maxLength: 4 }) }));
    fc.assert(
      fc.property(fc.array(fc.option(value as fc.Arbitrary<FieldValue>, { nil: null, freq: 6 }), { minLength: 1, maxLength: 30 }), fc.constantFrom<ShredMode>('always', 'never'), (col, shred) => {
        const ts = col.map((_, i) => 1_763_784_000_000 + i * 1000);
        const bytes = encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'm', tags: {}, ts, fields: { f: col } }] }, { shred });
        const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
        const entry = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
        const cols = decodeBlockColumns(bytes, entry, undefined, 0);
        const out = new JsonBytes(32);
        const next = columnWriter(cols, 'f');
        for (let i = 0; i < ts.length; i++) if (!next(out, Uint8Array.of(i === 0 ? 0x5b : 0x2c))) out.ascii(i === 0 ? '[null' : ',null');
        out.byte(0x5d);
        expect(utf8(out)).toBe(JSON.stringify(col));
      }),
      { numRuns: 300 },
    );
  });

  it('writes columns of numbers that rarely repeat (texts formatted a column at a time) as JSON.stringify of their values, whole and projected', () => {
    // Long enough columns of mostly distinct doubles, the special values and repeats among them,
    // so that the writer takes the column-at-a-time texts for some nodes and not for others.
    const fraction = fc.tuple(fc.integer(), fc.integer({ min: 3, max: 1_000_003 })).map(([a, b]) => a / b);
    const cold = fc.oneof({ weight: 8, arbitrary: fraction }, { weight: 8, arbitrary: fraction.map(Math.fround) }, { weight: 1, arbitrary: number });
    const record = fc.record({ pos: fc.record({ lat: cold, lon: cold }), imu: fc.array(cold, { minLength: 0, maxLength: 3 }), n: fc.integer({ min: 0, max: 3 }), 'ü "k"': cold }, { requiredKeys: ['pos', 'imu'] });
    const paths = fc.constantFrom<(string[] | undefined)[]>([undefined], [['f.pos.lat']], [['f.imu']], [['f.n', 'f.pos']], [['f.ü "k"']]);
    fc.assert(
      fc.property(fc.array(fc.option(record as fc.Arbitrary<FieldValue>, { nil: null, freq: 20 }), { minLength: 64, maxLength: 160 }), paths, (col, [fields]) => {
        const ts = col.map((_, i) => 1_763_784_000_000 + i * 1000);
        const bytes = encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', metric: 'm', tags: {}, ts, fields: { f: col } }] }, { shred: 'always' });
        const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
        const entry = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
        const cols = decodeBlockColumns(bytes, entry, fields, 0);
        const out = new JsonBytes(128);
        const next = columnWriter(cols, 'f');
        for (let i = 0; i < ts.length; i++) if (!next(out, Uint8Array.of(i === 0 ? 0x5b : 0x2c))) out.ascii(i === 0 ? '[null' : ',null');
        out.byte(0x5d);
        expect(utf8(out)).toBe(JSON.stringify(assemble(decodeBlockColumns(bytes, entry, fields, 0)).fields['f']));
      }),
      { numRuns: 200 },
    );
  });
});
