import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FieldValue, SeriesColumns } from '@s4/core';
import {
  ColumnRole,
  RecordEncoder,
  decodeCatalog,
  decodeDayList,
  decodeRecords,
  decodeSegment,
  decodeWal,
  encodeCatalog,
  encodeDayList,
  encodeSegment,
  encodeWalRecord,
  type Catalog,
  type SegmentInput,
  type WalAppend,
  type WalRecord,
} from '../index.js';
import { canon, ordered, parseExact, stringifyExact } from '../testing/exact-json.js';

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

/** Records of changing shape: every case the shredder must round-trip exactly, key order included. */
function machineRecord(i: number): FieldValue {
  const position: Record<string, FieldValue> = i % 10 === 9 ? { lon: 151.2093 + i * 1e-5, lat: -33.8688 - i * 1e-5 } : { lat: -33.8688 - i * 1e-5, lon: 151.2093 + i * 1e-5 };
  if (i >= 20) position['alt'] = Math.round(4200 + i * 3) / 100;
  const sats: FieldValue[] = [];
  for (let k = 0; k < (i * 7) % 5; k++) {
    const sat: Record<string, FieldValue> = { prn: 2 + k * 3, snr: k === 2 ? null : 30 + ((i + k) % 9), used: k % 2 === 0 };
    if (k === 3) delete sat['snr'];
    if (i % 6 === 1 && k === 0) sat['x.y'] = 'dot';
    if (i % 8 === 3 && k === 1) sat['[]'] = [];
    sats.push(sat);
  }
  const accel = { x: i === 4 ? -0 : i / 8, y: i === 5 ? NaN : -i / 4, z: i === 6 ? Infinity : 9.81 };
  const meta: Record<string, FieldValue> = { fw: i < 30 ? '4.12.3' : '4.13.0', '10': i, '9': -i, 'ü😀': i % 2 === 0, tags: i % 3 === 0 ? [] : ['a', 'b'].slice(0, (i % 3) + 0) };
  if (i === 17) Object.defineProperty(meta, '__proto__', { value: { a: 1 }, enumerable: true, writable: true, configurable: true });
  const r: Record<string, FieldValue> = { position, sats, imu: i === 13 ? 'offline' : i === 14 ? null : { accel }, meta };
  if (i % 11 === 2) r['diag'] = [[1, [2, 'x']], {}, null, -0];
  if (i === 15) delete r['imu'];
  return r;
}

const records = seq(40, machineRecord) as Record<string, FieldValue>[];
const recordFields = (names: string[]) => Object.fromEntries(names.map((k) => [k, records.map((r) => (Object.hasOwn(r, k) ? r[k]! : null))]));

export const SEGMENT_V2: SegmentInput = {
  ns: 'golden',
  shard: 3,
  window: H,
  series: [
    { id: '1111000000000000', metric: 'machine.gps', tags: { device: 'dm-ü-1' }, ts: tsReg.slice(0, 40), fields: recordFields(['position', 'sats', 'imu', 'meta', 'diag']) },
    {
      id: '2222000000000000',
      metric: 'irregular',
      tags: {},
      ts: tsReg.slice(0, 30),
      fields: {
        // Every record its own keys: shredding does not pay, the writer stores the field whole.
        bag: seq(30, (i) => ({ [`k${i}`]: i, [`s${i}`]: `v${i}` })),
        'a.b': seq(30, (i) => (i % 4 === 0 ? null : { 'c[]': [i, { d: i % 3 === 0 }] })),
        '': seq(30, (i) => [i, [i]]),
        value: seq(30, (i) => i / 4),
      },
    },
    SEGMENT_V1.series[0]!,
    { id: 'ffff000000000000', metric: 'edge.one', tags: {}, ts: [-1], fields: { value: [{ a: -0 }] } },
    { id: 'eeee000000000000', metric: 'edge.empty', tags: {}, ts: [], fields: {} },
  ],
};

/**
 * Version 3: blocks of row groups (written here with groups of at least 8 samples, so that a small
 * file holds several): records whose shape changes from group to group, a plain metric, and a block
 * too small to split, which stays a version 2 block inside the version 3 segment.
 */
export const GROUP_ROWS_V3 = 8;
const tsSpread = seq(40, (i) => H + i * 5000 + (i % 3) * 7) as number[];
export const SEGMENT_V3: SegmentInput = {
  ns: 'golden',
  shard: 3,
  window: H,
  series: [
    { id: '1111000000000000', metric: 'machine.gps', tags: { device: 'dm-ü-1' }, ts: tsSpread, fields: recordFields(['position', 'sats', 'imu', 'meta', 'diag']) },
    SEGMENT_V1.series[0]!,
    { id: 'ffff000000000000', metric: 'edge.one', tags: {}, ts: [-1], fields: { value: [{ a: -0 }] } },
  ],
};

/**
 * Version 4: version 3 whose numbers may be float32 decimals (segment.md, encoding 7, and node
 * codec 2): float32 readings of 0.1 steps as a plain field and inside shredded records, with the
 * exceptions (NaN, −0, ±Infinity), a float32 column no decimal of scale ≤ 15 holds, and doubles
 * that stay plain decimals or Gorilla.
 */
const f32 = Math.fround;
export const SEGMENT_V4: SegmentInput = {
  ns: 'golden',
  shard: 3,
  window: H,
  series: [
    ...SEGMENT_V3.series,
    {
      id: '3333000000000000',
      metric: 'sensor.f32',
      tags: { unit: '°C' },
      ts: tsSpread,
      fields: {
        snr: seq(40, (i) => f32(30 + (i % 9) / 10)),
        exceptions: seq(40, (i) => (i % 7 === 3 ? NaN : i % 11 === 5 ? -0 : i === 20 ? -Infinity : f32(-12.5 + i * 0.3))),
        tiny: seq(40, (i) => f32(1e-9 * (i + 1))),
        doubles: seq(40, (i) => i / 100 + 0.001),
        sats: seq(40, (i) => (i % 13 === 0 ? null : seq(1 + (i % 3), (k) => ({ prn: 3 + k, elevation: f32(45.3 + k * 0.1 + i / 10), snr: k === 1 ? f32(Math.PI * i) : f32(31.7) })))),
      },
    },
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

export const DAY_LIST_V1: number[] = [H - 4 * 3_600_000 - 86_400_000, H - 4 * 3_600_000, H - 4 * 3_600_000 + 3 * 86_400_000];

const bytesOf = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff);

export const WAL_V1: WalRecord[] = [
  { type: 'generation', ns: 'golden', shard: 3, value: 7 },
  { type: 'fence', ns: 'golden', shard: 3, value: 42 },
  { type: 'append', ns: 'golden', shard: 3, window: H, id: '7f3a0c1d2e4b5a69', key: JSON.stringify({ metric: 'cpu.usage', tags: { host: 'web-1' } }), data: bytesOf(40) },
  { type: 'append', ns: 'ns-ü-😀', shard: 9999, window: -3_600_000, id: 'ffff000000000000', key: JSON.stringify({ metric: 'édge', tags: { 'dévice': '日本語' } }), data: new Uint8Array(0) },
  { type: 'release', ns: 'golden', shard: 3, window: H, id: '7f3a0c1d2e4b5a69', length: 40 },
  { type: 'generation', ns: 'golden', shard: 3, value: 2 ** 53 - 1 },
];

/**
 * Version 2 adds the `appends` record (one frame for the appends of a commit); a v2 log may hold
 * v1 records too (a log written by the previous version, then appended to).
 */
const WAL_V2: WalRecord[] = [
  WAL_V1[0]!,
  {
    type: 'appends',
    entries: [
      { ns: 'golden', shard: 3, window: H, id: '7f3a0c1d2e4b5a69', key: JSON.stringify({ metric: 'cpu', tags: { host: 'a' } }), data: new Uint8Array([0x92, 0x01, 0x80]) },
      { ns: 'ns-ü-😀', shard: 9999, window: -3_600_000, id: 'ffff000000000000', key: JSON.stringify({ metric: 'édge', tags: { 'dévice': '日本語' } }), data: new Uint8Array(0) },
      { ns: 'golden', shard: 0, window: 0, id: '0000000000000001', key: JSON.stringify({ metric: 'm', tags: {} }), data: new Uint8Array([0x92, 0x02, 0x81, 0xa1, 0x76, 0xc3]) },
    ],
  },
  { type: 'appends', entries: [] },
  WAL_V1[WAL_V1.length - 1]!,
];

/**
 * Version 3 adds the `releases` record (a flush's releases of one shard-window in one frame); a
 * v3 log holds the older records too.
 */
const WAL_V3: WalRecord[] = [
  ...WAL_V2.slice(0, 2),
  {
    type: 'releases',
    ns: 'golden',
    shard: 3,
    window: H,
    cursors: [
      { id: '7f3a0c1d2e4b5a69', length: 3 },
      { id: 'ffff000000000000', length: 2 ** 53 - 1 },
    ],
  },
  { type: 'releases', ns: 'ns-ü-😀', shard: 9999, window: -3_600_000, cursors: [{ id: 'dévice-😀', length: 0 }] },
  { type: 'releases', ns: 'golden', shard: 0, window: 0, cursors: [] },
  WAL_V1[4]!,
];

/** WAL records as JSON: the opaque log bytes of an append as hex. */
type WalAppendJson = Omit<WalAppend, 'data'> & { data: string };
type WalJson = (Exclude<WalRecord, { type: 'append' } | { type: 'appends' }> | ({ type: 'append' } & WalAppendJson) | { type: 'appends'; entries: WalAppendJson[] })[];

const hex = (d: Uint8Array) => Buffer.from(d).toString('hex');
const unhex = (d: string) => new Uint8Array(Buffer.from(d, 'hex'));

function walRecordsToJson(records: readonly WalRecord[]): WalJson {
  return records.map((r) => (r.type === 'append' ? { ...r, data: hex(r.data) } : r.type === 'appends' ? { type: 'appends', entries: r.entries.map((e) => ({ ...e, data: hex(e.data) })) } : r));
}

function walToJson(bytes: Uint8Array): WalJson {
  const { records, validBytes } = decodeWal(bytes);
  if (validBytes !== bytes.length) throw new Error(`the golden WAL has a torn tail at byte ${validBytes}`);
  return walRecordsToJson(records);
}

function walFromJson(json: WalJson): Uint8Array {
  return Buffer.concat(
    json.map((r) =>
      encodeWalRecord(r.type === 'append' ? { ...r, data: unhex(r.data) } : r.type === 'appends' ? { type: 'appends', entries: r.entries.map((e) => ({ ...e, data: unhex(e.data) })) } : r),
    ),
  );
}

const golden = [
  {
    name: 'segment-v1',
    ext: 's4seg',
    encode: () => encodeSegment(SEGMENT_V1, { version: 1 }),
    decode: (b: Uint8Array) => decodeSegment(b),
    reencode: (json: { footer: SegmentInput; series: SegmentInput['series'] }) =>
      encodeSegment({ ns: json.footer.ns, shard: json.footer.shard, window: json.footer.window, series: json.series }, { version: 1 }),
  },
  {
    name: 'segment-v2',
    ext: 's4seg',
    encode: () => encodeSegment(SEGMENT_V2, { version: 2 }),
    decode: (b: Uint8Array) => decodeSegment(b),
    reencode: (json: { footer: SegmentInput; series: SegmentInput['series'] }) =>
      encodeSegment({ ns: json.footer.ns, shard: json.footer.shard, window: json.footer.window, series: json.series }, { version: 2 }),
  },
  {
    name: 'segment-v3',
    ext: 's4seg',
    encode: () => encodeSegment(SEGMENT_V3, { version: 3, groupRows: GROUP_ROWS_V3, groupNumberCells: 0 }),
    decode: (b: Uint8Array) => decodeSegment(b),
    reencode: (json: { footer: SegmentInput; series: SegmentInput['series'] }) =>
      encodeSegment({ ns: json.footer.ns, shard: json.footer.shard, window: json.footer.window, series: json.series }, { version: 3, groupRows: GROUP_ROWS_V3, groupNumberCells: 0 }),
  },
  {
    name: 'segment-v4',
    ext: 's4seg',
    encode: () => encodeSegment(SEGMENT_V4, { version: 4, groupRows: GROUP_ROWS_V3, groupNumberCells: 0 }),
    decode: (b: Uint8Array) => decodeSegment(b),
    reencode: (json: { footer: SegmentInput; series: SegmentInput['series'] }) =>
      encodeSegment({ ns: json.footer.ns, shard: json.footer.shard, window: json.footer.window, series: json.series }, { version: 4, groupRows: GROUP_ROWS_V3, groupNumberCells: 0 }),
  },
  {
    name: 'catalog-v1',
    ext: 's4cat',
    encode: () => encodeCatalog(CATALOG_V1),
    decode: (b: Uint8Array) => decodeCatalog(b),
    reencode: (json: Catalog) => encodeCatalog(json),
  },
  {
    name: 'day-list-v1',
    ext: 'days',
    encode: () => encodeDayList(DAY_LIST_V1),
    decode: (b: Uint8Array) => decodeDayList(b),
    reencode: (json: number[]) => encodeDayList(json),
  },
  {
    name: 'wal-v1',
    ext: 'wal',
    encode: () => walFromJson(walRecordsToJson(WAL_V1)),
    decode: walToJson,
    reencode: walFromJson,
  },
  {
    name: 'wal-v2',
    ext: 'wal',
    encode: () => walFromJson(walRecordsToJson(WAL_V2)),
    decode: walToJson,
    reencode: walFromJson,
  },
  {
    name: 'wal-v3',
    ext: 'wal',
    encode: () => walFromJson(walRecordsToJson(WAL_V3)),
    decode: walToJson,
    reencode: walFromJson,
  },
] as const;

it.each([
  ['segment-v1', SEGMENT_V1],
  ['segment-v2', SEGMENT_V2],
  ['segment-v3', SEGMENT_V3],
  ['segment-v4', SEGMENT_V4],
] as const)('the golden %s holds exactly the input it was made from, key order included', (name, input) => {
  const { series } = decodeSegment(new Uint8Array(readFileSync(dir(`${name}.s4seg`))));
  const byId = [...input.series].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(canon(series)).toBe(canon(byId));
  const fields = (s: readonly { fields: Record<string, FieldValue[]> }[]) => s.map((x) => ordered(Object.fromEntries(Object.keys(x.fields).sort().map((k) => [k, x.fields[k]]))));
  expect(fields(series)).toEqual(fields(byId));
});

it('the golden segment-v2 stores nested records shredded and an irregular field whole', () => {
  const { footer } = decodeSegment(new Uint8Array(readFileSync(dir('segment-v2.s4seg'))));
  const columns = (id: string) => new Map(footer.series.find((e) => e.id === id)!.directory!.layout.chunks.flatMap((c) => c.map((col) => [col.path, col.role] as const)));
  const gps = columns('1111000000000000');
  for (const p of ['position.lat', 'sats[].prn', 'sats[].x\\.y', 'sats[].\\[\\]', 'imu.accel.x', 'meta.tags[]', 'meta.__proto__.a']) expect(gps.get(p), p).toBe(ColumnRole.Node);
  // Four records out of forty have diagnostics: shredding them would not pay.
  expect(gps.get('diag')).toBe(ColumnRole.Field);
  const irregular = columns('2222000000000000');
  expect(irregular.get('bag')).toBe(ColumnRole.Field);
  expect(irregular.get('a\\.b.c\\[\\][].d')).toBe(ColumnRole.Node);
  expect(irregular.get('[][]')).toBe(ColumnRole.Node);
  expect(footer.version).toBe(2);
});

it('the golden segment-v3 splits the larger blocks into row groups and keeps the one-sample block whole', () => {
  const { footer } = decodeSegment(new Uint8Array(readFileSync(dir('segment-v3.s4seg'))));
  expect(footer.version).toBe(3);
  const groups = (id: string) => footer.series.find((e) => e.id === id)!.directory!.layout.groups;
  expect(groups('1111000000000000')!.span).toBe(60_000);
  expect(groups('1111000000000000')!.slots).toEqual([0, 1, 2, 3]);
  expect(groups('7f3a0c1d2e4b5a69')!.span).toBe(10_000);
  expect(groups('7f3a0c1d2e4b5a69')!.slots).toEqual([0, 1, 2, 3, 4, 5]);
  expect(groups('ffff000000000000')).toBeUndefined();
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

/**
 * A hot-tier log (hot-log.md). Its bytes depend on how samples arrived (batches or records), which
 * the decoded columns do not tell, so the JSON holds the appends that made it and what they read
 * back as; the appends must still encode to the committed bytes.
 */
interface Append {
  ts: number[];
  names: string[];
  columns: FieldValue[][];
}

const nested = JSON.parse('{"readings":[1,0.5,"x",null,true],"meta":{"ok":false,"deep":[[[]]]}}') as FieldValue;

export const HOT_LOG_V1: Append[] = [
  // A batch of dense numbers (Float64Array columns): NaN, ±Infinity and -0 exact.
  { ts: [H, H + 1000, H + 2000, H + 1000], names: ['value'], columns: [[1.5, -0, NaN, Infinity]] },
  // A batch with absent values: plain arrays with nil.
  { ts: [H + 3000, H + 4000], names: ['a', 'b', 'c'], columns: [[1, null], [null, -2.25], [null, null]] },
  // One sample of numbers: a record (a batch needs two).
  { ts: [H + 5000], names: ['value'], columns: [[42]] },
  // Records: int32 bounds, float64 beyond them, -0, strings, booleans, nested values, unicode names.
  {
    ts: [H + 6000, -(2 ** 53) + 1, 2 ** 53 - 1],
    names: ['i', 'f', 's', 'ok', 'payload', 'dév-ü', '10', '9'],
    columns: [
      [-2_147_483_648, 2_147_483_647, 2_147_483_648],
      [-0, 5e-324, -1.7976931348623157e308],
      ['idle', '', '日本語😀'],
      [true, false, null],
      [nested, [], null],
      [null, 'x', 0.1],
      [10, null, 9],
      [null, null, null],
    ],
  },
  // Sixteen fields or more take a map16 header.
  { ts: [H + 7000], names: Array.from({ length: 17 }, (_, i) => `f${i}`), columns: Array.from({ length: 17 }, (_, i) => [i % 2 ? i : `v${i}`]) },
];

function encodeHotLog(appends: readonly Append[]): Uint8Array {
  const enc = new RecordEncoder(1 << 20);
  for (const a of appends) {
    const indexes = a.ts.map((_, i) => i);
    if (!enc.batch(a.ts, a.names, a.columns, indexes)) {
      const keys = enc.keysOf(a.names);
      for (const i of indexes) enc.record(a.ts[i]!, keys, a.columns, i, 'golden');
    }
  }
  return enc.take();
}

describe('golden hot-log-v1', () => {
  const bin = dir('hot-log-v1.msgpack');
  const json = dir('hot-log-v1.json');
  const committed = () => parseExact<{ appends: Append[]; decoded: SeriesColumns }>(readFileSync(json, 'utf8'));

  it.runIf(UPDATE)('regenerates', () => {
    const bytes = encodeHotLog(HOT_LOG_V1);
    writeFileSync(bin, bytes);
    writeFileSync(json, `${stringifyExact({ appends: HOT_LOG_V1, decoded: decodeRecords(bytes) }, 1)}\n`);
  });

  it('decodes the committed log to the committed columns', () => {
    expect(existsSync(bin), `${bin} missing; run with S4_UPDATE_GOLDEN=1`).toBe(true);
    expect(canon(decodeRecords(new Uint8Array(readFileSync(bin))))).toBe(canon(committed().decoded));
  });

  it('encodes the committed appends to identical bytes', () => {
    const bytes = new Uint8Array(readFileSync(bin));
    expect(Buffer.from(encodeHotLog(committed().appends)).equals(bytes)).toBe(true);
    expect(Buffer.from(encodeHotLog(HOT_LOG_V1)).equals(bytes)).toBe(true);
  });
});
