import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { decodeFooter, encodeSegment, readTrailer, SEGMENT_TRAILER_BYTES, type FooterEntry, type SegmentSeriesInput } from '../segment/index.js';
import { series as seriesArb, unicode } from '../testing/arbitraries.js';
import { decodeSeriesIndex, encodeSeriesIndex, indexedEntry, type Postings, type SeriesIndex, type SeriesIndexInput } from './series-index.js';

const H = 1_763_784_000_000; // 2025-11-22T04:00Z
const DAY = H - 4 * 3_600_000;

function footerOf(bytes: Uint8Array): FooterEntry[] {
  const t = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
  return decodeFooter(bytes.subarray(t.footerOffset, t.footerOffset + t.footerLength)).series;
}

/** Every (part, series) the index lists, as footer entries, keyed part → id. */
function entriesOf(index: SeriesIndex): Map<string, Map<string, FooterEntry>> {
  return new Map(index.parts.map((p) => [p.key, new Map(Array.from(p.ordinals, (_, i) => indexedEntry(index, p, i)).map((e) => [e.id, e]))]));
}

/** The postings as a brute-force scan of the series table would give them. */
function postingsOf(index: SeriesIndex) {
  const metrics = new Map<string, number[]>();
  const tags = new Map<string, Map<string, number[]>>();
  Array.from({ length: index.series.length }, (_, o) => index.series.at(o)).forEach((s, o) => {
    metrics.set(s.metric, [...(metrics.get(s.metric) ?? []), o]);
    for (const [k, v] of Object.entries(s.tags)) {
      const m = tags.get(k) ?? new Map<string, number[]>();
      m.set(v, [...(m.get(v) ?? []), o]);
      tags.set(k, m);
    }
  });
  return { metrics, tags };
}

const asLists = (m: ReadonlyMap<string, Uint32Array>) => new Map([...m].map(([k, v]) => [k, [...v]]));

/** Everything an index says, as plain data (reads every block of a version 2 index). */
const content = (index: SeriesIndex) => ({
  ns: index.ns,
  shard: index.shard,
  day: index.day,
  series: Array.from({ length: index.series.length }, (_, o) => index.series.at(o)),
  metrics: Object.fromEntries([...asLists(index.metrics)]),
  tags: Object.fromEntries([...index.tags].map(([k, m]) => [k, Object.fromEntries(asLists(m))])),
  parts: Object.fromEntries([...entriesOf(index)].map(([k, m]) => [k, [...m.values()]])),
});

/** Parts of one shard-day: a pool of series (one metric and tag set per id), each part holding some of them. */
const input: fc.Arbitrary<{ input: SeriesIndexInput; footers: Map<string, FooterEntry[]> }> = fc
  .uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }), { minLength: 1, maxLength: 8 })
  .chain((ids) => fc.tuple(...ids.map((id) => seriesArb(id, 8))))
  .chain((pool: SegmentSeriesInput[]) =>
    fc.tuple(
      fc.constant(pool),
      fc.array(fc.tuple(fc.subarray(pool), fc.constantFrom<1 | 2>(1, 2), fc.nat({ max: 23 })), { minLength: 0, maxLength: 4 }),
      unicode,
    ),
  )
  .map(([, parts, ns]) => {
    const footers = new Map<string, FooterEntry[]>();
    const list = parts.map(([series, version, hour], i) => {
      const window = DAY + hour * 3_600_000;
      const key = `v1/x/seg/0001/h${hour}/p${String(i).padStart(6, '0')}.s4seg`;
      const entries = footerOf(encodeSegment({ ns, shard: 1, window, series }, { version }));
      footers.set(key, entries);
      return { key, window, series: entries };
    });
    return { input: { ns, shard: 1, day: DAY, parts: list }, footers };
  });

describe('series index', () => {
  it.each([1, 2] as const)('round-trips (version %i): every part lists its footer entries exactly, and the postings are the series table inverted', (version) => {
    fc.assert(
      fc.property(input, ({ input: i, footers }) => {
        const bytes = encodeSeriesIndex(i, undefined, version);
        const index = decodeSeriesIndex(bytes);
        expect([index.ns, index.shard, index.day]).toEqual([i.ns, i.shard, i.day]);
        const got = entriesOf(index);
        expect([...got.keys()].sort()).toEqual([...footers.keys()].sort());
        for (const [key, entries] of footers) expect(new Map(entries.map((e) => [e.id, e]))).toEqual(got.get(key));
        const ids = [...new Set([...footers.values()].flatMap((l) => l.map((e) => e.id)))].sort();
        expect(Array.from({ length: index.series.length }, (_, o) => index.series.at(o).id)).toEqual(ids);
        // Each tag as the series' own tags have it, and none it lacks.
        for (let o = 0; o < index.series.length; o++) {
          const s = index.series.at(o);
          for (const [k, v] of Object.entries(s.tags)) expect(index.series.tag(o, k)).toBe(v);
          expect(index.series.keys(o)).toEqual(Object.keys(s.tags));
          expect(index.series.tag(o, '\u0000none')).toBeUndefined();
        }
        const want = postingsOf(index);
        expect(asLists(index.metrics)).toEqual(want.metrics);
        expect(new Map([...index.tags].map(([k, m]) => [k, asLists(m)]))).toEqual(want.tags);
        // Each list found by its name (binary search over the names as written), and no other name.
        for (const [k, m] of want.tags) {
          for (const [v, list] of m) expect([...(index.tags.get(k)!.get(v) ?? [])]).toEqual(list);
          expect(index.tags.get(k)!.get('\u0000none')).toBeUndefined();
        }
        for (const [name, list] of want.metrics) expect([...(index.metrics.get(name) ?? [])]).toEqual(list);
        expect(index.metrics.get('\u0000none')).toBeUndefined();
        // Names by prefix, as a matcher narrows a key's values.
        for (const [k, m] of want.tags) {
          const names = [...m.keys()].sort();
          const postings = index.tags.get(k) as Postings;
          for (const prefix of ['', ...names.map((n) => n.slice(0, 1)), ...names, '\u0000', '\uffff', '\ud83d']) {
            expect(postings.withPrefix(prefix)).toEqual(names.filter((n) => n.startsWith(prefix)));
            for (const suffix of ['', ...names.map((n) => n.slice(-1)), ...names.map((n) => n.slice(-2)), '\ude00', 'zz'])
              expect(postings.withPrefix(prefix, suffix)).toEqual(names.filter((n) => n.startsWith(prefix) && n.endsWith(suffix)));
          }
        }
        // Deterministic: the same content in another order gives the same bytes.
        expect(encodeSeriesIndex({ ...i, parts: [...i.parts].reverse().map((p) => ({ ...p, series: [...p.series].reverse() })) }, undefined, version)).toEqual(bytes);
      }),
      { numRuns: 150 },
    );
  });

  it('lists the names with a prefix and suffix exactly as a filter of every name does, across blocks of names (version 2)', () => {
    // Over 4,096 values of one key: the names span two blocks, and the prefix runs cross them.
    const hosts = Array.from({ length: 5_000 }, (_, i) => `h${i}`);
    const odd = ['', 'é', 'ü😀', 'a\u0000b', '0', '00', 'h', 'hé0'];
    const values = [...hosts, ...odd];
    const series: FooterEntry[] = values.map((v, i) => ({ id: String(i).padStart(5, '0'), metric: 'm', tags: { host: v }, offset: 0, length: 9, count: 1, minTs: 0, maxTs: 0, fields: ['value'] }));
    const index = decodeSeriesIndex(encodeSeriesIndex({ ns: 'x', shard: 0, day: 0, parts: [{ key: 'p', window: 0, series }] }, 0, 2));
    const names = index.tags.get('host') as Postings;
    const sorted = [...values].sort();
    const affixes = fc.constantFrom('', 'h', 'h1', 'h49', 'h4999', 'h5', 'hé', 'x', '0', '00', 'é', '😀', '\ud83d', 'b', 'h10');
    fc.assert(
      fc.property(affixes, affixes, (prefix, suffix) => {
        expect(names.withPrefix(prefix, suffix)).toEqual(sorted.filter((v) => v.startsWith(prefix) && v.endsWith(suffix)));
      }),
      { numRuns: 200 },
    );
  });

  // Version 2 decodes blocks when they are read: the whole index is read here, so a damaged block shows.
  it.each([1, 2] as const)('refuses damaged bytes (version %i) with CorruptDataError, never another error', (version) => {
    const readAll = (b: Uint8Array) => content(decodeSeriesIndex(b));
    fc.assert(
      fc.property(input, fc.nat(), fc.integer({ min: 1, max: 255 }), fc.constantFrom(0, 3), ({ input: i }, at, x, level) => {
        const bytes = encodeSeriesIndex(i, level, version);
        const bad = bytes.slice();
        bad[at % bad.length]! ^= x;
        try {
          readAll(bad);
        } catch (e) {
          expect(e).toBeInstanceOf(CorruptDataError);
        }
        expect(() => readAll(bytes.subarray(0, bytes.length - 1 - (at % bytes.length)))).toThrow(CorruptDataError);
      }),
      { numRuns: 150 },
    );
  });

  /**
   * Golden files: an index of each version, committed with its decoded content. Readers must keep
   * decoding them; the writer must keep producing them byte for byte. Regenerate only for a new version:
   *   S4_UPDATE_GOLDEN=1 npx vitest run --project unit libs/format/src/series-index
   */
  it.each([1, 2] as const)('decodes and re-encodes the golden file of version %i exactly', (version) => {
    const dir = (name: string) => fileURLToPath(new URL(`../../testdata/${name}`, import.meta.url));
    const pool: SegmentSeriesInput[] = [
      { id: '0a1b2c3d4e5f6071', metric: 'cpu.usage', tags: { host: 'web-1', dc: 'eu' }, ts: [H, H + 10_000, H + 20_000], fields: { value: [0.5, 0.75, 1] } },
      { id: '1b2c3d4e5f607182', metric: 'cpu.usage', tags: { host: 'web-2', dc: 'us' }, ts: [H + 5_000], fields: { value: [2] } },
      { id: '2c3d4e5f60718293', metric: 'mem.free', tags: { host: 'web-1', dc: 'eu', 'ü😀': 'v' }, ts: [H, H + 60_000], fields: { value: [1e9, 2e9], note: ['a', null] } },
      { id: '3d4e5f6071829304', metric: 'up', tags: {}, ts: [H + 3_600_000], fields: { value: [true] } },
    ];
    const part = (key: string, window: number, series: SegmentSeriesInput[], version: 1 | 2) => ({ key, window, series: footerOf(encodeSegment({ ns: 'golden', shard: 3, window, series }, { version })) });
    const golden: SeriesIndexInput = {
      ns: 'golden',
      shard: 3,
      day: DAY,
      parts: [
        part('v1/golden/seg/0003/20251122T04Z/p000001-f0000000001.s4seg', H, pool.slice(0, 3), 2),
        part('v1/golden/seg/0003/20251122T04Z/p000002-f0000000002.s4seg', H, pool.slice(1, 2), 1),
        part('v1/golden/seg/0003/20251122T05Z/p000001-f0000000002.s4seg', H + 3_600_000, pool.slice(3), 2),
      ],
    };
    const bytes = encodeSeriesIndex(golden, undefined, version);
    const name = `series-index-v${version}`;
    if (process.env.S4_UPDATE_GOLDEN === '1') {
      writeFileSync(dir(`${name}.s4idx`), bytes);
      writeFileSync(dir(`${name}.json`), `${JSON.stringify(content(decodeSeriesIndex(bytes)), null, 1)}\n`);
    }
    const stored = new Uint8Array(readFileSync(dir(`${name}.s4idx`)));
    expect(JSON.parse(JSON.stringify(content(decodeSeriesIndex(stored))))).toEqual(JSON.parse(readFileSync(dir(`${name}.json`), 'utf8')));
    expect(bytes).toEqual(stored);
  });
});
