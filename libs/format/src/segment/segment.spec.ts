import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { decodeBlock, decodeFooter, decodeSegment, encodeSegment as encode, readTrailer, SEGMENT_TRAILER_BYTES } from '../index.js';
import { seriesList } from '../testing/arbitraries.js';
import { canon } from '../testing/exact-json.js';
import type { SegmentInput, SegmentSeriesInput } from './types.js';

const input = (series: SegmentSeriesInput[]): SegmentInput => ({ ns: 'metrics', shard: 7, window: 1_763_784_000_000, series });
const sortById = (s: SegmentSeriesInput[]) => [...s].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
const expected = (s: SegmentSeriesInput[]) => canon(sortById(s).map(({ id, metric, tags, ts, fields }) => ({ id, metric, tags, ts, fields })));

describe.each([1, 2] as const)('segment version %i', (version) => {
  const encodeSegment = (i: SegmentInput) => encode(i, { version });
  it('round-trips random series exactly', () => {
    fc.assert(
      fc.property(seriesList(), (series) => {
        const bytes = encodeSegment(input(series));
        const { footer, series: out } = decodeSegment(bytes);
        expect(canon(out)).toBe(expected(series));
        expect(footer.series.map((e) => e.id)).toEqual(sortById(series).map((s) => s.id));
      }),
      { numRuns: 300 },
    );
  });

  it('writes the same bytes whatever was encoded before, and none a later encoding changes (encoders reuse scratch buffers)', () => {
    fc.assert(
      fc.property(seriesList(), seriesList(), (a, b) => {
        const first = encodeSegment(input(a));
        const copy = first.slice();
        encodeSegment(input(b));
        expect(Buffer.from(first).equals(copy)).toBe(true);
        expect(Buffer.from(encodeSegment(input(a))).equals(copy)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('serves ranged reads: trailer, then footer, then one block at a time or adjacent blocks in one range', () => {
    fc.assert(
      fc.property(seriesList(), (series) => {
        const bytes = encodeSegment(input(series));
        const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
        const footer = decodeFooter(bytes.slice(footerOffset, footerOffset + footerLength));
        expect([footer.ns, footer.shard, footer.window, footer.version]).toEqual(['metrics', 7, 1_763_784_000_000, version]);
        const sorted = sortById(series);
        const first = footer.series[0];
        const last = footer.series.at(-1);
        const range = first && last ? bytes.slice(first.offset, last.offset + last.length) : new Uint8Array();
        footer.series.forEach((e, i) => {
          const s = sorted[i]!;
          expect([e.count, e.metric, canon(e.tags)]).toEqual([s.ts.length, s.metric, canon(s.tags)]);
          const block = decodeBlock(range.subarray(e.offset - first!.offset, e.offset - first!.offset + e.length), e);
          expect(canon(block)).toBe(canon({ ts: s.ts, fields: s.fields }));
        });
      }),
      { numRuns: 100 },
    );
  });

  it('encodes the same input to the same bytes whatever the input order', () => {
    fc.assert(
      fc.property(seriesList(), (series) => {
        expect(encodeSegment(input([...series].reverse()))).toEqual(encodeSegment(input(series)));
      }),
      { numRuns: 50 },
    );
  });

  it('detects every flipped byte with CorruptDataError, never wrong data', () => {
    fc.assert(
      fc.property(seriesList(4), fc.nat(), fc.integer({ min: 1, max: 255 }), (series, at, mask) => {
        const bytes = encodeSegment(input(series));
        bytes[at % bytes.length]! ^= mask;
        expect(() => decodeSegment(bytes)).toThrow(CorruptDataError);
      }),
      { numRuns: 500 },
    );
  });

  it('rejects truncated objects and bad slices with CorruptDataError', () => {
    const bytes = encodeSegment(input([{ id: 'a', metric: 'm', tags: {}, ts: [1, 2, 3], fields: { value: [1, 2, 3] } }]));
    for (let n = 0; n < bytes.length; n += 3) expect(() => decodeSegment(bytes.subarray(0, n))).toThrow(CorruptDataError);
    const { footerOffset } = readTrailer(bytes.subarray(-SEGMENT_TRAILER_BYTES));
    expect(() => decodeFooter(bytes.subarray(8, footerOffset))).toThrow(CorruptDataError);
    expect(() => decodeBlock(bytes.subarray(footerOffset))).toThrow(CorruptDataError);
    expect(() => readTrailer(bytes.subarray(0, 30))).toThrow(CorruptDataError);
  });

  it('holds an empty series list and a one-sample series', () => {
    expect(decodeSegment(encodeSegment(input([]))).series).toEqual([]);
    const one = { id: 'x', metric: 'cpu', tags: { host: 'a' }, ts: [-1], fields: { value: [-0] } };
    const [got] = decodeSegment(encodeSegment(input([one]))).series;
    expect(Object.is(got?.fields.value?.[0], -0)).toBe(true);
    expect(got?.ts).toEqual([-1]);
  });

  it('refuses inputs that break the contract, naming the problem', () => {
    const s = (ts: number[], value: (number | null)[]) => input([{ id: 'a', metric: 'm', tags: {}, ts, fields: { value } }]);
    expect(() => encodeSegment(s([2, 1], [1, 2]))).toThrow(/strictly ascending/);
    expect(() => encodeSegment(s([1, 1], [1, 2]))).toThrow(/strictly ascending/);
    expect(() => encodeSegment(s([1.5], [1]))).toThrow(/safe integer/);
    expect(() => encodeSegment(s([1, 2], [1]))).toThrow(/1 values for 2 timestamps/);
    expect(() => encodeSegment(input([{ id: 'a', metric: 'm', tags: {}, ts: [1], fields: { v: ['\ud800'] } }]))).toThrow(/lone surrogate/);
    const dup = { id: 'a', metric: 'm', tags: {}, ts: [], fields: {} };
    expect(() => encodeSegment(input([dup, dup]))).toThrow(/twice/);
  });
});

it('decodeBlock with its footer entry rejects a block that belongs to another entry', () => {
  const a = { id: 'a', metric: 'm', tags: {}, ts: [1, 2], fields: { value: [1, 2] } };
  const b = { id: 'b', metric: 'm', tags: {}, ts: [1, 3], fields: { value: [1, 2] } };
  const bytes = encode(input([a, b]));
  const { footerOffset, footerLength } = readTrailer(bytes.subarray(-SEGMENT_TRAILER_BYTES));
  const [ea, eb] = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series;
  expect(() => decodeBlock(bytes.subarray(eb!.offset, eb!.offset + eb!.length), ea)).toThrow(CorruptDataError);
});
