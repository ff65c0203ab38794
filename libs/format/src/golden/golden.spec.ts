import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { decodeCatalog, decodeSegment, encodeCatalog, encodeSegment, type Catalog, type SegmentInput } from '../index.js';
import { canon, parseExact, stringifyExact } from '../testing/exact-json.js';

/**
 * Golden files: committed objects of every shipped format version, with the decoded content as
 * JSON beside them. Readers must keep decoding them; the current writer must keep producing
 * them byte for byte. Regenerate (only for a new version, never to paper over a diff) with
 *   S4_UPDATE_GOLDEN=1 npx vitest run --project unit libs/format/src/golden
 */
const dir = (name: string) => fileURLToPath(new URL(`../../testdata/${name}`, import.meta.url));
const UPDATE = process.env.S4_UPDATE_GOLDEN === '1';

const H = 1_763_784_000_000; // 2025-11-22T04:00Z
const seq = (n: number, f: (i: number) => FieldValue) => Array.from({ length: n }, (_, i) => f(i));
const tsReg = seq(60, (i) => H + i * 1000 + (i % 7 === 3 ? 13 : 0)) as number[];

export const SEGMENT_V1: SegmentInput = {
  ns: 'golden',
  shard: 3,
  window: H,
  series: [
    {
      id: '7f3a0c1d2e4b5a69',
      metric: 'cpu.usage',
      tags: { host: 'web-1', region: 'eu-west-1' },
      ts: tsReg,
      fields: { value: seq(60, (i) => Math.round(5000 + Math.sin(i / 5) * 2500) / 100) },
    },
    {
      id: '0a1b2c3d4e5f6071',
      metric: 'sensor.raw',
      tags: { device: 'dev-ü-😀' },
      ts: tsReg,
      fields: {
        gorilla: seq(60, (i) => Math.sin(i) * Math.PI),
        specials: seq(60, (i) => [NaN, Infinity, -Infinity, -0, 5e-324, 1.7976931348623157e308, 0.25][i % 7]!),
        decimal_with_exceptions: seq(60, (i) => (i % 10 === 0 ? NaN : i % 10 === 5 ? -0 : i / 4)),
        ok: seq(60, (i) => (i % 5 === 0 ? null : i % 3 === 0)),
        state: seq(60, (i) => ['idle', 'busy', '', '日本語', '😀'][i % 5]!),
        payload: seq(60, (i) => (i % 4 === 0 ? null : { readings: [i, i * 0.5, 'x'], meta: { ok: i % 2 === 0 } })),
        mixed: seq(60, (i) => [1, 'one', true, [1, 2], null][i % 5]!),
        exact: seq(60, (i) => (i % 2 ? [-0, { __proto_: 'not proto' }] : (JSON.parse('{"__proto__":{"a":1}}') as FieldValue))),
        absent: seq(60, () => null),
        '10': seq(60, (i) => i),
        '9': seq(60, (i) => -i * 1_000_000_007),
      },
    },
    { id: 'ffff000000000000', metric: 'edge.one', tags: {}, ts: [-1], fields: { value: [-0] } },
    { id: 'eeee000000000000', metric: 'edge.empty', tags: {}, ts: [], fields: {} },
    { id: 'dddd000000000000', metric: 'edge.far', tags: { k: 'v' }, ts: [-(2 ** 53) + 1, 0, 2 ** 53 - 1], fields: { value: [1, 2, 3] } },
  ],
};

export const CATALOG_V1: Catalog = {
  ns: 'golden',
  shard: 3,
  day: H - 4 * 3_600_000,
  entries: [
    { window: H, part: 1, fence: 9, key: 'v1/golden/seg/0003/20251122T04Z/p000001-f0000000009.s4seg', size: 4096, footerOffset: 3900, footerLength: 172, series: 5, samples: 124, minTs: -(2 ** 53) + 1, maxTs: 2 ** 53 - 1, metrics: null, createdAt: H + 3_700_000 },
    { window: H, part: 0, fence: 7, key: 'v1/golden/seg/0003/20251122T04Z/p000000-f0000000007.s4seg', size: 1234, footerOffset: 1100, footerLength: 110, series: 2, samples: 120, minTs: H, maxTs: H + 59_000, metrics: ['cpu.usage', 'sensor.raw'], createdAt: H + 3_650_000 },
  ],
};

const golden = [
  {
    name: 'segment-v1',
    ext: 's4seg',
    encode: () => encodeSegment(SEGMENT_V1),
    decode: (b: Uint8Array) => decodeSegment(b),
    reencode: (json: { footer: SegmentInput; series: SegmentInput['series'] }) =>
      encodeSegment({ ns: json.footer.ns, shard: json.footer.shard, window: json.footer.window, series: json.series }),
  },
  {
    name: 'catalog-v1',
    ext: 's4cat',
    encode: () => encodeCatalog(CATALOG_V1),
    decode: (b: Uint8Array) => decodeCatalog(b),
    reencode: (json: Catalog) => encodeCatalog(json),
  },
] as const;

it('the golden segment holds exactly the input it was made from', () => {
  const { series } = decodeSegment(new Uint8Array(readFileSync(dir('segment-v1.s4seg'))));
  const byId = [...SEGMENT_V1.series].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(canon(series)).toBe(canon(byId));
});

describe.each(golden)('golden $name', (g) => {
  const bin = dir(`${g.name}.${g.ext}`);
  const json = dir(`${g.name}.json`);

  it.runIf(UPDATE)('regenerates', () => {
    const bytes = g.encode();
    writeFileSync(bin, bytes);
    writeFileSync(json, `${stringifyExact(g.decode(bytes), 1)}\n`);
  });

  it('decodes the committed object to the committed JSON', () => {
    expect(existsSync(bin), `${bin} missing; run with S4_UPDATE_GOLDEN=1`).toBe(true);
    const decoded = g.decode(new Uint8Array(readFileSync(bin)));
    expect(canon(decoded)).toBe(canon(parseExact(readFileSync(json, 'utf8'))));
  });

  it('re-encodes the committed content to identical bytes', () => {
    const committed = new Uint8Array(readFileSync(bin));
    expect(Buffer.from(g.reencode(parseExact(readFileSync(json, 'utf8')))).equals(committed)).toBe(true);
    expect(Buffer.from(g.encode()).equals(committed)).toBe(true);
  });
});
