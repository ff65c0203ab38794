import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { decodeFooter, encodeSegment, readTrailer, SEGMENT_TRAILER_BYTES, selectFooter, type FooterWant } from '../index.js';
import { canon } from '../testing/exact-json.js';
import type { SegmentSeriesInput } from './types.js';

// Names from a small pool (unicode, a lone surrogate's neighbour U+FFFD, '__proto__') so that selectors hit.
const name = fc.constantFrom('cpu', 'mem', 'host', 'dc', 'a', 'ä', '\u{1F600}', '\uFFFD', '__proto__', '');
const value = fc.constantFrom('h1', 'h2', 'x', 'ünï', '\u{1F600}', '\uFFFD', '', '__proto__');

const seriesOf = (version: 1 | 2 | 3): fc.Arbitrary<SegmentSeriesInput[]> =>
  fc.uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), { maxLength: 12 }).chain((ids) =>
    ids.length === 0
      ? fc.constant([] as SegmentSeriesInput[])
      : fc.tuple(
          ...ids.map((id) =>
            fc.record({
              id: fc.constant(id),
              metric: name,
              tags: fc.dictionary(name, value, { maxKeys: 3 }),
              ts: fc.constant(version === 3 ? [1_000, 2_000] : [1_000]),
              fields: fc.constant({ value: version === 3 ? [1, 2] : [1] }),
            }) as fc.Arbitrary<SegmentSeriesInput>,
          ),
        ),
  );

const want: fc.Arbitrary<FooterWant> = fc.record({
  metric: fc.option(name, { nil: undefined }),
  equal: fc.uniqueArray(fc.tuple(name, fc.oneof(value, fc.constant('\uD800'))), { maxLength: 2, selector: ([k]) => k }),
});

function footerBytes(series: SegmentSeriesInput[], version: 1 | 2 | 3): Uint8Array {
  const bytes = encodeSegment({ ns: 'metrics', shard: 3, window: 1_763_784_000_000, series }, { version });
  const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
  return bytes.slice(footerOffset, footerOffset + footerLength);
}

/** What a selection must return: decodeFooter's entries filtered by the same conditions. */
function expected(bytes: Uint8Array, w: FooterWant) {
  return decodeFooter(bytes).series.filter((e) => (w.metric === undefined || e.metric === w.metric) && w.equal.every(([k, v]) => Object.hasOwn(e.tags, k) && e.tags[k] === v) && (!w.accept || w.accept(e.metric, e.tags)));
}

describe.each([1, 2, 3] as const)('selectFooter, segment version %i', (version) => {
  it('keeps exactly the entries decodeFooter has that the selection names, equal to them', () => {
    fc.assert(
      fc.property(seriesOf(version), want, (series, w) => {
        const bytes = footerBytes(series, version);
        expect(canon(selectFooter(bytes, w))).toBe(canon(expected(bytes, w)));
      }),
      { numRuns: 400 },
    );
  });

  it('applies accept to the kept entries only, with their decoded keys', () => {
    fc.assert(
      fc.property(seriesOf(version), want, fc.constantFrom('h1', 'x', '\uFFFD'), (series, w, v) => {
        const bytes = footerBytes(series, version);
        const seen: string[] = [];
        const accept = (metric: string, tags: Record<string, string>) => (seen.push(metric), Object.values(tags).includes(v));
        const got = selectFooter(bytes, { ...w, accept });
        expect(canon(got)).toBe(canon(expected(bytes, { ...w, accept: (_m, tags) => Object.values(tags).includes(v) })));
        expect(seen.length).toBe(expected(bytes, w).length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('selectFooter on damaged bytes', () => {
  it('throws CorruptDataError where decodeFooter does (the frame checksum)', () => {
    const series: SegmentSeriesInput[] = [{ id: 'a', metric: 'cpu', tags: { host: 'h1' }, ts: [1], fields: { value: [1] } }];
    const bytes = footerBytes(series, 2);
    for (let i = 0; i < bytes.length; i++) {
      const bad = bytes.slice();
      bad[i]! ^= 0x20;
      let full: unknown = null;
      try {
        decodeFooter(bad);
      } catch (e) {
        full = e;
      }
      if (full) expect(() => selectFooter(bad, { metric: 'cpu', equal: [['host', 'h1']] })).toThrow(CorruptDataError);
    }
  });
});
