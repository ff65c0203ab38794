import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError, seriesId } from '@s4/core';
import { decodeSegment, encodeSegment } from '../segment/index.js';
import { canon, parseExact, stringifyExact } from '../testing/exact-json.js';
import { ROLLUP_GROUP_ROWS, bucketsOfGroup, decodeRollupObject, encodeRollupObject, isGroupedRollup, keysOfBlock, keysOfBlockWith, parseGroupEntryId, type RollupSeries } from './groups.js';
import { bucketsToColumns, rollupSeriesId, type Bucket } from './rollup.js';

/**
 * Golden rollup object of column version 3 (rollup.md) with the series it holds as JSON beside
 * it. Regenerate only for a new version:
 *   S4_UPDATE_GOLDEN=1 npx vitest run --project unit libs/format/src/rollup
 */
const dir = (name: string) => fileURLToPath(new URL(`../../testdata/${name}`, import.meta.url));
const UPDATE = process.env.S4_UPDATE_GOLDEN === '1';
const H = 1_763_784_000_000; // 2025-11-22T04:00Z

/** A series as JSON can hold it: resolution → field → buckets. */
type Content = { metric: string; tags: Record<string, string>; byRes: Record<string, Record<string, Bucket[]>> }[];

function minuteBuckets(n: number, seed: number): Bucket[] {
  return Array.from({ length: n }, (_, i) => {
    const start = H + i * 60_000;
    const base = Math.round((50 + Math.sin(i / 3 + seed) * 20) * 100) / 100;
    return { start, count: 60 - (i % 5 === 2 ? 1 : 0), sum: Math.round(base * 6000) / 100 + 1e-9, min: base - 1.25, max: base + 2.5, first: base, firstTs: start + (i % 7 === 3 ? 212 : 0), last: base + 0.5, lastTs: start + 59_000 };
  });
}

/** Buckets of two-decimal values (exact decimals: their values are stored split). */
function decimalBuckets(n: number, seed: number): Bucket[] {
  return Array.from({ length: n }, (_, i) => {
    const c = (x: number) => Math.round(5000 + Math.sin(i + seed) * 3000 + x) / 100;
    return { start: H + i * 60_000, count: 6, sum: c(0) + c(7) + c(-3) + c(40) + c(12) + c(-150), min: c(-150), max: c(220), first: c(0), firstTs: H + i * 60_000 + 4_000, last: c(40), lastTs: H + i * 60_000 + 54_000 };
  });
}

const CONTENT: Content = [
  {
    metric: 'sensor.temp',
    tags: { device: 'dev-ü', site: 'north' },
    byRes: {
      '1m': { value: minuteBuckets(60, 1), spare: minuteBuckets(60, 2).filter((_, i) => i % 2 === 0) },
      '1h': { value: [{ start: H, count: 3598, sum: 180_012.5, min: -0.5, max: Infinity, first: 50.25, firstTs: H + 17, last: 49.75, lastTs: H + 3_599_000 }] },
    },
  },
  { metric: 'sensor.temp', tags: { device: 'sparse' }, byRes: {} },
  { metric: 'node_load1', tags: { host: 'a', dc: 'x' }, byRes: { '1h': { value: [{ start: H, count: 360, sum: 43.2, min: -0, max: 0.31, first: 0.12, firstTs: H + 7_000, last: 0.11, lastTs: H + 3_597_000 }] } } },
  { metric: 'node_load1', tags: { host: 'c' }, byRes: { '1m': { value: decimalBuckets(12, 3) } } },
  { metric: 'node_load1', tags: { host: 'b' }, byRes: { '1h': { value: [{ start: H, count: 359, sum: 1e300, min: NaN, max: 7, first: 1, firstTs: H + 9_999, last: 2, lastTs: H + 3_599_999 }] } } },
];

const toSeries = (c: Content): RollupSeries[] => c.map((s) => ({ metric: s.metric, tags: s.tags, byRes: new Map(Object.entries(s.byRes).map(([r, f]) => [r, new Map(Object.entries(f))] as const)) }));

/** What a decoded object holds, by series id, in the JSON shape. */
function contentOf(bytes: Uint8Array): Record<string, Content[number]> {
  const out: Record<string, Content[number]> = {};
  for (const [id, s] of decodeRollupObject(bytes).series) out[id] = { metric: s.metric, tags: s.tags, byRes: Object.fromEntries([...s.byRes].map(([r, f]) => [r, Object.fromEntries(f)])) };
  return out;
}
const byId = (c: Content) => Object.fromEntries(c.map((s) => [seriesId(s), s]));
const encode = (c: Content, window = H) => encodeRollupObject({ ns: 'golden', shard: 3, window, series: toSeries(c) }).bytes;

describe('golden rollup-v3', () => {
  const bin = dir('rollup-v3.s4rol');
  const json = dir('rollup-v3.json');

  it.runIf(UPDATE)('regenerates', () => {
    writeFileSync(bin, encode(CONTENT));
    writeFileSync(json, `${stringifyExact(CONTENT, 1)}\n`);
  });

  it('decodes the committed object to the committed series', () => {
    expect(existsSync(bin), `${bin} missing; run with S4_UPDATE_GOLDEN=1`).toBe(true);
    expect(canon(contentOf(new Uint8Array(readFileSync(bin))))).toBe(canon(byId(parseExact<Content>(readFileSync(json, 'utf8')))));
  });

  it('encodes the committed series to identical bytes', () => {
    expect(Buffer.from(encode(parseExact<Content>(readFileSync(json, 'utf8')))).equals(readFileSync(bin))).toBe(true);
  });

  it('reads the version 2 golden object the same way (the day fold reads either)', () => {
    const got = contentOf(new Uint8Array(readFileSync(dir('rollup-v2.s4rol'))));
    const v2 = parseExact<{ id: string; metric: string; tags: Record<string, string>; fields: Record<string, Bucket[]> }[]>(readFileSync(dir('rollup-v2.json'), 'utf8'));
    const want: Record<string, Content[number]> = {};
    for (const e of v2) {
      const [id, res] = e.id.split('.') as [string, string];
      want[id] ??= { metric: e.metric, tags: e.tags, byRes: {} };
      if (res !== 'raw') want[id].byRes[res] = e.fields;
    }
    expect(canon(got)).toBe(canon(want));
  });
});

/** A value as gauges have them (two decimals: split), or any double (stored whole). */
const valueArb = (decimal: boolean) => (decimal ? fc.oneof({ weight: 30, arbitrary: fc.integer({ min: -1e9, max: 1e9 }).map((x) => x / 100) }, { weight: 1, arbitrary: fc.constant(-0) }) : fc.double());

const bucketAt = (start: number, decimal: boolean) =>
  fc
    .record({
      count: fc.integer({ min: 1, max: 100_000 }),
      // Any double (stored whole), or a float sum of decimals as a rollup of gauges has (split).
      sum: fc.oneof(fc.double(), fc.array(fc.integer({ min: -1e7, max: 1e7 }), { minLength: 1, maxLength: 60 }).map((xs) => xs.reduce((a, x) => a + x / 100, 0))),
      min: valueArb(decimal),
      max: valueArb(decimal),
      first: valueArb(decimal),
      last: valueArb(decimal),
      firstAt: fc.integer({ min: 0, max: 59_999 }),
      lastAt: fc.integer({ min: 0, max: 59_999 }),
    })
    .map((b): Bucket => ({ start, count: b.count, sum: b.sum, min: b.min, max: b.max, first: b.first, firstTs: start + b.firstAt, last: b.last, lastTs: start + b.lastAt }));

/** Buckets of one resolution at distinct starts inside [window, window + 1 h) (or straddling it, for 7m). */
const bucketsOf = (window: number, ms: number, decimal: boolean) =>
  fc.uniqueArray(fc.integer({ min: 0, max: Math.floor(3_600_000 / ms) }), { minLength: 1, maxLength: 8 }).chain((idx) =>
    fc.tuple(...idx.sort((a, b) => a - b).map((i) => bucketAt((Math.floor(window / ms) + i) * ms, decimal))),
  );

const RES = { '1m': 60_000, '7m': 420_000, '1h': 3_600_000 } as const;
const tagsArb = fc.dictionary(fc.constantFrom('host', 'dc', '__proto__', 'a.b', 'ü', ''), fc.string({ maxLength: 4 }), { maxKeys: 3 });
const seriesArb =
  fc.record({
    metric: fc.constantFrom('m', 'node_cpu', 'x.y'),
    tags: tagsArb,
    byRes: fc.dictionary(fc.constantFrom(...(Object.keys(RES) as (keyof typeof RES)[])), fc.uniqueArray(fc.constantFrom('value', 'x', 'series', '__proto__'), { minLength: 1, maxLength: 2 }), { maxKeys: 3 }),
  });

describe('rollup column version 3', () => {
  /** Any series of any metrics with buckets at any resolutions, in one window. */
  const contentArb = (window: number) => {
    return fc
      .tuple(fc.uniqueArray(seriesArb, { maxLength: 12, selector: (s) => seriesId(s) }), fc.boolean())
      .chain(([list, decimal]) =>
        fc.tuple(
          ...list.map((s) =>
            fc
              .tuple(
                ...Object.entries(s.byRes).map(([res, fields]) =>
                  fc.tuple(...fields.map((f) => bucketsOf(window, RES[res as keyof typeof RES], decimal).map((b) => [f, b] as const))).map((fs) => [res, Object.fromEntries(fs)] as const),
                ),
              )
              .map((rs) => ({ metric: s.metric, tags: s.tags, byRes: Object.fromEntries(rs) })),
          ),
        ),
      );
  };

  it('round-trips any series, tags, resolutions and buckets, bit for bit', () => {
    const window = H + 7 * 3_600_000;
    const arb = contentArb(window);
    fc.assert(
      fc.property(arb, (content) => {
        const c = content as Content;
        const bytes = encode(c, window);
        expect(canon(contentOf(bytes))).toBe(canon(byId(c)));
      }),
      { numRuns: 150 },
    );
  });

  it('reads the keys and buckets of chosen series as reading all of them and picking would', () => {
    const window = H + 7 * 3_600_000;
    let picked = 0;
    fc.assert(
      fc.property(contentArb(window), fc.array(fc.boolean(), { maxLength: 12 }), (content, mask) => {
        for (const block of decodeSegment(encode(content, window)).series) {
          const g = parseGroupEntryId(block.id)!;
          if (g.resolution === null) {
            const all = keysOfBlock(block.metric, block);
            for (const key of all) {
              const pairs = Object.entries(key.tags).filter((_, i) => mask[i] !== false);
              const want = all.map((k, o) => [o, k] as const).filter(([, k]) => pairs.every(([t, v]) => k.tags[t] === v));
              expect([...keysOfBlockWith(block.metric, block, pairs)]).toEqual(want);
            }
            expect([...keysOfBlockWith(block.metric, block, [['no such tag', 'x']])]).toEqual([]);
            continue;
          }
          const full = bucketsOfGroup(block, window, g.resolution);
          const only = new Set([...full.keys()].filter((o) => mask[o % 12] === true));
          picked += only.size;
          expect(bucketsOfGroup(block, window, g.resolution, only)).toEqual(new Map([...full].filter(([o]) => only.has(o))));
        }
      }),
      { numRuns: 150 },
    );
    expect(picked).toBeGreaterThan(20);
  });

  it('splits a metric into groups of about ROLLUP_GROUP_ROWS rows, never splitting a series', () => {
    const c: Content = Array.from({ length: 300 }, (_, i) => ({ metric: 'm', tags: { host: `h${String(i).padStart(3, '0')}` }, byRes: { '1m': { value: minuteBuckets(60, i) } } }));
    const bytes = encode(c);
    const { footer } = decodeSegment(bytes);
    const groups = footer.series.filter((e) => parseGroupEntryId(e.id)?.resolution === '1m');
    expect(groups.length).toBeGreaterThan(1);
    groups.forEach((g, i) => {
      expect(g.count % 60).toBe(0);
      if (i < groups.length - 1) expect(g.count).toBeGreaterThanOrEqual(ROLLUP_GROUP_ROWS);
      expect(g.count).toBeLessThan(ROLLUP_GROUP_ROWS + 60);
    });
    expect(canon(contentOf(bytes))).toBe(canon(byId(c)));
  });

  it('splits float sums of decimals into units and ulps, and keeps other sums whole', () => {
    const { series } = decodeSegment(encode(CONTENT));
    const group = (metric: string) => series.find((s) => s.metric === metric && parseGroupEntryId(s.id)!.resolution === '1h')!;
    // sensor.temp: sums like 3012.340000001 (split); node_load1 holds 1e300 (no decimal fits: whole).
    expect(Object.keys(group('sensor.temp').fields).filter((k) => k.startsWith('value.sum')).sort()).toEqual(['value.sumScale', 'value.sumUlps', 'value.sumUnits']);
    expect(Object.keys(group('node_load1').fields).filter((k) => k.startsWith('value.sum'))).toEqual(['value.sum']);
    // A float sum of two-decimal values with rounding noise comes back bit for bit.
    let sum = 0;
    for (let i = 0; i < 60; i++) sum += Math.round(Math.sin(i) * 5000) / 100 + 0.07;
    expect(sum).not.toBe(Math.round(sum * 100) / 100); // 101.17000000000002: noise the decimal codec cannot store
    const b: Bucket = { start: H, count: 60, sum, min: 0, max: 1, first: 0, firstTs: H, last: 1, lastTs: H + 1 };
    const c: Content = [{ metric: 'm', tags: {}, byRes: { '1h': { value: [b] } } }];
    expect(Object.keys(decodeSegment(encode(c)).series[1]!.fields)).toContain('value.sumUlps');
    expect(Object.is(decodeRollupObject(encode(c)).series.get(seriesId(c[0]!))!.byRes.get('1h')!.get('value')![0]!.sum, sum)).toBe(true);
  });

  it('splits decimal values into units against their neighbours, and keeps other values whole', () => {
    const walk = (n: number, seed: number): Bucket[] =>
      Array.from({ length: n }, (_, i) => {
        const c = (x: number) => Math.round(5000 + Math.sin(i + seed) * 3000 + x) / 100;
        return { start: H + i * 60_000, count: 60, sum: 1, min: c(-150), max: c(220), first: c(0), firstTs: H + i * 60_000, last: c(40), lastTs: H + i * 60_000 + 59_000 };
      });
    const c: Content = [
      { metric: 'm', tags: { s: 'a' }, byRes: { '1m': { value: walk(30, 1), spare: walk(20, 2).filter((_, i) => i % 3 !== 1) } } },
      { metric: 'm', tags: { s: 'b' }, byRes: { '1m': { value: walk(30, 3) } } },
      { metric: 'n', tags: {}, byRes: { '1m': { value: [...walk(3, 4), { ...walk(1, 5)[0]!, start: H + 3 * 60_000, min: -0 }] } } },
    ];
    const { series } = decodeSegment(encode(c));
    const group = (metric: string) => series.find((s) => s.metric === metric && parseGroupEntryId(s.id)!.resolution === '1m')!;
    const names = (metric: string, f: string) => Object.keys(group(metric).fields).filter((k) => k.startsWith(`${f}.`) && !k.includes('sum') && !k.endsWith('At') && !k.endsWith('count')).sort();
    expect(names('m', 'value')).toEqual(['value.firstStep', 'value.lastUnits', 'value.maxAbove', 'value.minBelow', 'value.valueScale']);
    expect(names('m', 'spare')).toEqual(['spare.firstStep', 'spare.lastUnits', 'spare.maxAbove', 'spare.minBelow', 'spare.valueScale']);
    // −0 is no decimal (0 / 100 is +0): that block keeps its values whole, and −0 comes back.
    expect(names('n', 'value')).toEqual(['value.first', 'value.last', 'value.max', 'value.min']);
    expect(canon(contentOf(encode(c)))).toBe(canon(byId(c)));
  });

  it('tells version 3 objects from version 2 by their entries', () => {
    expect(isGroupedRollup(decodeSegment(encode(CONTENT)).footer)).toBe(true);
    const v2 = encodeSegment({ ns: 'p', shard: 0, window: H, series: [{ id: rollupSeriesId('00000000000000aa', '1m'), metric: 'm', tags: {}, ...bucketsToColumns(new Map([['value', minuteBuckets(2, 0)]])) }] });
    expect(isGroupedRollup(decodeSegment(v2).footer)).toBe(false);
    expect(parseGroupEntryId('0a1b2c3d4e5f6071.1h')).toBeNull();
    expect(parseGroupEntryId('@00000002/1h/00000040')).toEqual({ metric: 2, resolution: '1h', first: 40 });
  });

  it('refuses a group that holds a series its keys do not give that resolution', () => {
    const c: Content = [{ metric: 'm', tags: { host: 'a' }, byRes: { '1m': { value: minuteBuckets(2, 0) } } }];
    const { footer, series } = decodeSegment(encode(c));
    const keys = series.find((s) => parseGroupEntryId(s.id)!.resolution === null)!;
    const forged = encodeSegment({ ns: 'p', shard: 0, window: footer.window, series: series.map((s) => (s === keys ? { ...s, fields: { ...s.fields, res: [''] } } : s)) });
    expect(() => decodeRollupObject(forged)).toThrow(CorruptDataError);
  });
});
