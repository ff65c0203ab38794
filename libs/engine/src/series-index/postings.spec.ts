import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMatchers, matchersMatch, tagsMatch, type TagMatcher } from '@s4/core';
import { decodeSeriesIndex, encodeSeriesIndex, seriesTable, type FooterEntry, type IndexedPart, type SeriesIndex } from '@s4/format';
import { difference, intersect, selectOrdinals, slotsOf, union } from './postings.js';

/** An index of just a series table and its postings (parts are not needed to select). */
function indexOf(series: { metric: string; tags: Record<string, string> }[]): SeriesIndex {
  const metrics = new Map<string, number[]>();
  const tags = new Map<string, Map<string, number[]>>();
  series.forEach((s, o) => {
    metrics.set(s.metric, [...(metrics.get(s.metric) ?? []), o]);
    for (const [k, v] of Object.entries(s.tags)) {
      const m = tags.get(k) ?? new Map<string, number[]>();
      m.set(v, [...(m.get(v) ?? []), o]);
      tags.set(k, m);
    }
  });
  return {
    ns: 'x',
    shard: 0,
    day: 0,
    series: seriesTable(series.map((s, i) => ({ id: String(i).padStart(4, '0'), ...s }))),
    metrics: new Map([...metrics].map(([k, v]) => [k, Uint32Array.from(v)])),
    tags: new Map([...tags].map(([k, m]) => [k, new Map([...m].map(([v, l]) => [v, Uint32Array.from(l)]))])),
    layouts: [],
    parts: [],
  };
}

const value = fc.constantFrom('a', 'b', 'ab', 'web-1', 'web-2', 'x.y');
const key = fc.constantFrom('host', 'dc', 'role');
const seriesArb = fc.array(fc.record({ metric: fc.constantFrom('cpu', 'mem'), tags: fc.dictionary(key, value, { maxKeys: 3 }) }), { maxLength: 40 });
const matcherArb: fc.Arbitrary<TagMatcher> = fc.oneof(
  fc.record({ key, op: fc.constantFrom('=' as const, '!=' as const), value: fc.oneof(value, fc.constant('')) }),
  fc.record({ key, op: fc.constantFrom('=~' as const, '!~' as const), value: fc.constantFrom('.*', '.+', 'a|b', 'web-.*', 'a.*', '', 'b|', 'x\\.y', 'web-[0-9]', 'web-1|web-2', 'web-1|c', '(a|b)', 'w.*2', 'a+b?', 'web-\\d|a') }),
);

describe('selection from postings', () => {
  it('selects exactly the series a scan of every series would (metric, tag equalities, matchers)', () => {
    fc.assert(
      fc.property(
        seriesArb,
        fc.option(fc.constantFrom('cpu', 'mem', 'disk'), { nil: undefined }),
        fc.dictionary(key, value, { maxKeys: 1 }),
        fc.array(matcherArb, { maxLength: 3 }),
        (series, metric, tags, matchers) => {
          const compiled = compileMatchers(matchers);
          const want = series.flatMap((s, i) => ((metric === undefined || s.metric === metric) && tagsMatch(s.tags, tags) && matchersMatch(s.tags, compiled) ? [i] : []));
          expect([...selectOrdinals(indexOf(series), { metric, tags, matchers: compiled })]).toEqual(want);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('selects the same when a metric has fewer series than a tag has values (each series tested alone)', () => {
    const many = fc.array(fc.record({ metric: fc.constantFrom('cpu', 'mem', 'disk', 'net'), tags: fc.record({ host: fc.stringMatching(/^[a-c]{1,3}$/), dc: fc.constantFrom('a', 'b') }, { requiredKeys: ['dc'] }) }), { maxLength: 60 });
    const matcher: fc.Arbitrary<TagMatcher> = fc.record({
      key: fc.constant('host'),
      op: fc.constantFrom('=' as const, '!=' as const, '=~' as const, '!~' as const),
      value: fc.constantFrom('a', 'ab', '', 'a.*', '.*b', 'c|', '.+', 'a|ab|abc', 'ab.', 'b[a-c]', 'a(b|c)'),
    });
    fc.assert(
      fc.property(many, fc.constantFrom('cpu', 'mem'), fc.array(matcher, { minLength: 1, maxLength: 2 }), (series, metric, matchers) => {
        const compiled = compileMatchers(matchers);
        const want = series.flatMap((s, i) => (s.metric === metric && matchersMatch(s.tags, compiled) ? [i] : []));
        expect([...selectOrdinals(indexOf(series), { metric, tags: {}, matchers: compiled })]).toEqual(want);
      }),
      { numRuns: 400 },
    );
  });

  it('selects from a version 2 index (rows decoded on demand) exactly what it selects from the same index decoded whole (version 1)', () => {
    // Unicode names, empty tag sets, keys with many values: the shapes that move names across blocks.
    const name = fc.oneof(fc.constantFrom('a', 'ab', 'web-1', 'web-10', 'x.y', 'ü😀', 'é', 'a\u0000b'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }));
    const many = fc.array(
      fc.record({ metric: fc.constantFrom('cpu', 'mem', 'ü'), tags: fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom('host', 'dc', 'ключ'), name, { maxKeys: 3 })), n: fc.nat({ max: 2_000 }) }),
      { maxLength: 120 },
    );
    const matcher: fc.Arbitrary<TagMatcher> = fc.record({
      key: fc.oneof({ weight: 4, arbitrary: fc.constant('host') }, fc.constantFrom('dc', 'ключ', 'none')),
      op: fc.constantFrom('=' as const, '!=' as const, '=~' as const, '!~' as const),
      value: fc.oneof(name, { weight: 3, arbitrary: fc.constantFrom('', '.*', '.+', 'web-.*', 'web-1.*', 'web-[0-9]*0', '.*b', 'a|ab', 'ü.*', 'x\\.y|', '(a|é).*') }),
    });
    fc.assert(
      fc.property(many, fc.option(fc.constantFrom('cpu', 'mem', 'ü', 'disk'), { nil: undefined }), fc.dictionary(fc.constantFrom('host', 'dc'), name, { maxKeys: 1 }), fc.array(matcher, { maxLength: 3 }), (list, metric, tags, matchers) => {
        // Many series: the version 2 sections then span several blocks (hundreds of rows each).
        const series: FooterEntry[] = [];
        list.forEach((s, i) => {
          for (let k = 0; k <= s.n % 7; k++) series.push({ id: `${String(i).padStart(4, '0')}-${k}`, metric: s.metric, tags: { ...s.tags, ...(k > 0 ? { host: `web-${s.n + k}` } : {}) }, offset: 0, length: 9, count: 1, minTs: 0, maxTs: 0, fields: ['value'] });
        });
        const input = { ns: 'x', shard: 0, day: 0, parts: [{ key: 'p', window: 0, series }] };
        const whole = decodeSeriesIndex(encodeSeriesIndex(input, 0, 1));
        const lazy = decodeSeriesIndex(encodeSeriesIndex(input, 0, 2));
        expect(lazy.series.onDemand).toBe(true);
        const compiled = compileMatchers(matchers);
        const want = [...selectOrdinals(whole, { metric, tags, matchers: compiled })];
        expect([...selectOrdinals(lazy, { metric, tags, matchers: compiled })]).toEqual(want);
        // And what a scan of every series gives.
        const scan = Array.from({ length: whole.series.length }, (_, o) => whole.series.at(o)).flatMap((s, o) => ((metric === undefined || s.metric === metric) && tagsMatch(s.tags, tags) && matchersMatch(s.tags, compiled) ? [o] : []));
        expect(want).toEqual(scan);
      }),
      { numRuns: 150 },
    );
  });

  it('set operations on ascending lists', () => {
    const a = Uint32Array.from([1, 3, 5, 7, 9]);
    const b = Uint32Array.from([2, 3, 7, 10]);
    expect([...intersect(a, b)]).toEqual([3, 7]);
    expect([...difference(a, b)]).toEqual([1, 5, 9]);
    expect([...union([a, b])]).toEqual([1, 2, 3, 5, 7, 9, 10]);
    expect([...union([])]).toEqual([]);
  });

  it('finds the slots of a part holding wanted series, by merge or by binary search', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 500 })), fc.uniqueArray(fc.nat({ max: 500 })), (have, want) => {
        const ordinals = Uint32Array.from(have.sort((x, y) => x - y));
        const slots = slotsOf({ ordinals } as IndexedPart, Uint32Array.from(want.sort((x, y) => x - y)));
        expect(slots.map((i) => ordinals[i])).toEqual([...ordinals].filter((o) => want.includes(o)));
      }),
    );
  });
});
