import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameMap, type FieldValue } from '@s4/core';
import { decodeSegment, encodeSegment, type SegmentSeriesInput } from '../segment/index.js';
import { canon, parseExact, stringifyExact } from '../testing/exact-json.js';
import { RAW_MARKER, ROLLUP_COLUMNS_V1, bucketsToColumns, columnsToBuckets, parseRollupSeriesId, rollupSeriesId, type Bucket } from './rollup.js';

/**
 * Golden rollup objects (rollup.md): the committed bytes of each column version with the buckets
 * they hold as JSON beside them. Regenerate only for a new version:
 *   S4_UPDATE_GOLDEN=1 npx vitest run --project unit libs/format/src/rollup
 */
const dir = (name: string) => fileURLToPath(new URL(`../../testdata/${name}`, import.meta.url));
const UPDATE = process.env.S4_UPDATE_GOLDEN === '1';
const H = 1_763_784_000_000; // 2025-11-22T04:00Z

/** What a golden object holds: per entry id, its buckets per field (a raw marker: none). */
type Content = { id: string; metric: string; tags: Record<string, string>; fields: Record<string, Bucket[]> }[];

function minuteBuckets(n: number, seed: number): Bucket[] {
  return Array.from({ length: n }, (_, i) => {
    const start = H + i * 60_000;
    const base = Math.round((50 + Math.sin(i / 3 + seed) * 20) * 100) / 100;
    return { start, count: 60 - (i % 5 === 2 ? 1 : 0), sum: Math.round(base * 6000) / 100, min: base - 1.25, max: base + 2.5, first: base, firstTs: start + (i % 7 === 3 ? 212 : 0), last: base + 0.5, lastTs: start + 59_000 };
  });
}

const CONTENT: Content = ([
  { id: rollupSeriesId('0a1b2c3d4e5f6071', '1m'), metric: 'sensor.temp', tags: { device: 'dev-ü' }, fields: { value: minuteBuckets(60, 1), spare: minuteBuckets(60, 2).filter((_, i) => i % 2 === 0) } },
  { id: rollupSeriesId('0a1b2c3d4e5f6071', '1h'), metric: 'sensor.temp', tags: { device: 'dev-ü' }, fields: { value: [{ start: H, count: 3598, sum: 180_012.5, min: -0.5, max: Infinity, first: 50.25, firstTs: H + 17, last: 49.75, lastTs: H + 3_599_000 }] } },
  { id: rollupSeriesId('7f3a0c1d2e4b5a69', RAW_MARKER), metric: 'sensor.temp', tags: { device: 'sparse' }, fields: {} },
] as Content).sort((a, b) => (a.id < b.id ? -1 : 1)); // footer order

/** Version 2 columns, as the rollup builder writes them. */
function entriesV2(content: Content): SegmentSeriesInput[] {
  return content.map((c) => ({ id: c.id, metric: c.metric, tags: c.tags, ...bucketsToColumns(new Map(Object.entries(c.fields))) }));
}

/** Version 1 columns (absolute first/last times), as the builder wrote them before 2026-11-23. */
function entriesV1(content: Content): SegmentSeriesInput[] {
  return content.map((c) => {
    const starts = [...new Set(Object.values(c.fields).flatMap((l) => l.map((b) => b.start)))].sort((a, b) => a - b);
    const fields = nameMap<FieldValue[]>();
    for (const [f, list] of Object.entries(c.fields)) {
      for (const col of ROLLUP_COLUMNS_V1) fields[`${f}.${col}`] = starts.map((s) => { const b = list.find((x) => x.start === s); return b ? b[col] : null; });
    }
    return { id: c.id, metric: c.metric, tags: c.tags, ts: starts, fields };
  });
}

function contentOf(bytes: Uint8Array): Content {
  return decodeSegment(bytes).series.map((s) => ({ id: s.id, metric: s.metric, tags: s.tags, fields: Object.fromEntries(columnsToBuckets(s.ts, s.fields)) }));
}

describe.each([
  { name: 'rollup-v1', entries: entriesV1 },
  { name: 'rollup-v2', entries: entriesV2 },
])('golden $name', ({ name, entries }) => {
  const bin = dir(`${name}.s4rol`);
  const json = dir(`${name}.json`);
  const encode = (content: Content) => encodeSegment({ ns: 'golden', shard: 3, window: H, series: entries(content) }, { version: 3 });

  it.runIf(UPDATE)('regenerates', () => {
    writeFileSync(bin, encode(CONTENT));
    writeFileSync(json, `${stringifyExact(CONTENT, 1)}\n`);
  });

  it('decodes the committed object to the committed buckets', () => {
    expect(existsSync(bin), `${bin} missing; run with S4_UPDATE_GOLDEN=1`).toBe(true);
    expect(canon(contentOf(new Uint8Array(readFileSync(bin))))).toBe(canon(parseExact(readFileSync(json, 'utf8'))));
  });

  it('encodes the committed buckets to identical bytes', () => {
    expect(Buffer.from(encode(parseExact<Content>(readFileSync(json, 'utf8')))).equals(readFileSync(bin))).toBe(true);
  });
});

const bucket = fc
  .record({
    minute: fc.integer({ min: 0, max: 10_000 }),
    count: fc.integer({ min: 1, max: 100_000 }),
    sum: fc.double(),
    min: fc.double({ noNaN: true }),
    max: fc.double({ noNaN: true }),
    first: fc.double({ noNaN: true }),
    last: fc.double({ noNaN: true }),
    firstAt: fc.integer({ min: 0, max: 59_999 }),
    lastAt: fc.integer({ min: 0, max: 59_999 }),
  })
  .map((b): Bucket => {
    const start = H + b.minute * 60_000;
    return { start, count: b.count, sum: b.sum, min: b.min, max: b.max, first: b.first, firstTs: start + b.firstAt, last: b.last, lastTs: start + b.lastAt };
  });

describe('rollup columns', () => {
  it('round-trip any buckets of any fields through a segment object, bit for bit', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('value', 'x', 'a.b', '__proto__'), fc.uniqueArray(bucket, { selector: (b) => b.start, maxLength: 40 }), { minKeys: 1 }), (byField) => {
        const fields = new Map(Object.entries(byField).filter(([, l]) => l.length > 0).map(([f, l]) => [f, [...l].sort((a, b) => a.start - b.start)] as const));
        if (fields.size === 0) return;
        const bytes = encodeSegment({ ns: 'p', shard: 0, window: H, series: [{ id: rollupSeriesId('00000000000000aa', '1m'), metric: 'm', tags: {}, ...bucketsToColumns(fields) }] });
        const [s] = decodeSegment(bytes).series;
        expect(canon(Object.fromEntries(columnsToBuckets(s!.ts, s!.fields)))).toBe(canon(Object.fromEntries(fields)));
      }),
      { numRuns: 200 },
    );
  });

  it('names entries <series id>.<resolution> and parses them back', () => {
    expect(parseRollupSeriesId('7f3a0c1d2e4b5a69.raw')).toEqual({ id: '7f3a0c1d2e4b5a69', resolution: RAW_MARKER });
  });
});
