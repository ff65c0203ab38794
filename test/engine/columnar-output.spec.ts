import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { blockSource, columnarSeries, FrequencyAdmissionCache, mergeWindows, type SeriesResult, type Source } from '@s4/engine';
import { type BlockColumns, decodeBlockColumns, decodeFooter, encodeSegment, formatProjectionPath, projectBlockColumns, readTrailer, SEGMENT_TRAILER_BYTES, type ShredMode } from '@s4/format';
import { keyPaths, nestedColumns } from '../../libs/format/src/testing/arbitraries.js';
import { encode, type Format } from '../../apps/api/src/roles/api/output/formats.js';
import { compactNumbers, dictionary, nodeWire } from '../../apps/api/src/roles/api/output/columns-wire.js';
import { MsgpackStreamDecoder, packr, unpackr } from '../../apps/sdk/src/codec.js';
import { assembleShredded, toRecordBatch } from '../../apps/sdk/src/records.js';

const key = { metric: 'm', tags: { site: 'x', a: 'ü' } };

/** Samples [lo, hi) of the columns as one decoded segment block (a field no sample of the run has is left out). */
function block(ts: number[], fields: Record<string, FieldValue[]>, lo: number, hi: number, shred: ShredMode) {
  const part: Record<string, FieldValue[]> = {};
  for (const [name, col] of Object.entries(fields)) {
    const run = col.slice(lo, hi);
    if (run.some((v) => v !== null)) Object.defineProperty(part, name, { value: run, enumerable: true });
  }
  const bytes = encodeSegment({ ns: 'n', shard: 0, window: 0, series: [{ id: 's', ...key, ts: ts.slice(lo, hi), fields: part }] }, { shred });
  const { footerOffset, footerLength } = readTrailer(bytes.subarray(bytes.length - SEGMENT_TRAILER_BYTES));
  const entry = decodeFooter(bytes.subarray(footerOffset, footerOffset + footerLength)).series[0]!;
  return { bytes, entry };
}

/** The answer's bytes, as UTF-8 text (pieces may be strings or bytes, and a character may span two pieces). */
async function text(format: Format, results: SeriesResult[]): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of encode(format, (async function* () {
    yield* results;
  })())) pieces.push(typeof piece === 'string' ? Buffer.from(piece) : piece);
  return Buffer.concat(pieces).toString('utf8');
}

/** The records client.records() would yield for a MessagePack answer. */
async function sdkRecords(results: SeriesResult[], compact: boolean): Promise<{ ts: number; fields: Record<string, unknown> }[]> {
  const chunks: Buffer[] = [];
  for await (const piece of encode('msgpack', (async function* () {
    yield* results;
  })(), undefined, [], compact)) chunks.push(typeof piece === 'string' ? Buffer.from(piece) : piece);
  const d = new MsgpackStreamDecoder();
  const values = [...d.push(Buffer.concat(chunks)), ...d.end()];
  return values.flatMap((v) => [...toRecordBatch(v, (_n, c) => c as never).records()].map((r) => ({ ts: r.ts, fields: r.fields })));
}

function recordsOf(ts: readonly number[], fields: Record<string, readonly FieldValue[]>): { ts: number; fields: Record<string, unknown> }[] {
  return ts.map((t, i) => {
    const rec: Record<string, unknown> = {};
    for (const [name, col] of Object.entries(fields)) if (col[i] !== null && col[i] !== undefined) Object.defineProperty(rec, name, { value: col[i], enumerable: true, writable: true, configurable: true });
    return { ts: t, fields: rec };
  });
}

describe('answers written from block columns', () => {
  it('are byte for byte the answers built from record values (JSON, NDJSON), over block runs, ranges and projections', async () => {
    const cases = nestedColumns(14).chain((data) => {
      const n = data.ts.length;
      const paths: string[] = ['none'];
      for (const [name, col] of Object.entries(data.fields)) {
        paths.push(formatProjectionPath([name]));
        for (const v of col) for (const p of keyPaths(v)) paths.push(formatProjectionPath([name, ...p]));
      }
      return fc.record({
        data: fc.constant(data),
        cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, n - 1) }), { maxLength: 2 }).map((c) => c.filter((x) => x < n).sort((a, b) => a - b)),
        from: fc.integer({ min: -1, max: n }),
        span: fc.integer({ min: 0, max: n + 1 }),
        fields: fc.option(fc.uniqueArray(fc.constantFrom(...paths), { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 2 }),
        shred: fc.constantFrom<ShredMode>('always', 'never', 'auto'),
        format: fc.constantFrom<Format>('json', 'ndjson', 'msgpack'),
        cached: fc.boolean(),
        compact: fc.boolean(),
      });
    });
    await fc.assert(
      fc.asyncProperty(cases, async ({ data, cuts, from, span, fields, shred, format, cached, compact }) => {
        const { ts } = data;
        const bounds = [0, ...cuts, ts.length];
        const sources: Source[] = [];
        for (let i = 0; i + 1 < bounds.length; i++) {
          if (bounds[i] === bounds[i + 1]) continue;
          const { bytes, entry } = block(ts, data.fields, bounds[i]!, bounds[i + 1]!, shred);
          const whole = decodeBlockColumns(bytes.subarray(entry.offset, entry.offset + entry.length), entry);
          // A projection decodes only its chunks, or (a cached whole block) sees the whole columns through it.
          sources.push(blockSource(!fields ? whole : cached ? projectBlockColumns(whole, fields) : decodeBlockColumns(bytes, entry, fields, 0)));
        }
        const t0 = ts[0] ?? 0;
        const spec = { ...key, from: t0 + from * 1000, to: t0 + (from + span) * 1000, fields };
        // Two windows when there are two runs or more, so that window order is exercised too.
        const windows = new Map<number, Source[]>([[0, sources.slice(0, 1)]]);
        if (sources.length > 1) windows.set(1, sources.slice(1));
        const columnar = columnarSeries('s', key, windows, spec.from, spec.to, fields);
        expect(columnar).not.toBeNull();
        const merged = mergeWindows(windows, spec, fields);
        const plain: SeriesResult[] = merged.ts.length > 0 ? [{ id: 's', ...key, ...merged }] : [];
        const fromColumns: SeriesResult[] = columnar!.slices.length > 0 ? [columnar!] : [];
        if (format === 'msgpack') {
          // Known gap: msgpackr decodes a map key "__proto__" as "__proto_", so whole (unshredded)
          // values holding one do not round-trip through MessagePack; shredded ones carry keys as strings.
          // A field itself named __proto__ is refused by the server's write validation.
          fc.pre(!Object.hasOwn(data.fields, '__proto__') && (shred === 'always' || !JSON.stringify(data).includes('"__proto__"')));
          // The SDK's records (nested fields built from node columns) are the merged values, absent fields left out.
          // Compact columns (columns=2) or plain ones, -0 told from 0 where values travel as node
          // columns (msgpackr writes a -0 inside a whole value as the integer 0: a known gap).
          const got = await sdkRecords(fromColumns, compact);
          const want = recordsOf(merged.ts, merged.fields);
          const negZero = (_k: string, v: unknown) => (Object.is(v, -0) ? '-0' : v);
          if (shred === 'always') expect(JSON.stringify(got, negZero)).toBe(JSON.stringify(want, negZero));
          else expect(JSON.stringify(got)).toBe(JSON.stringify(want));
        } else expect(await text(format, fromColumns)).toBe(await text(format, plain));
        // The values built on demand are those of the merging path.
        if (fromColumns.length > 0) expect(JSON.stringify({ ts: columnar!.ts, fields: columnar!.fields })).toBe(JSON.stringify({ ts: merged.ts, fields: merged.fields }));
      }),
      { numRuns: 400 },
    );
  });

  it('go as compact node columns that the SDK turns back into exactly the same values', () => {
    const kinds = [
      fc.double(),
      fc.integer({ min: -300, max: 300 }),
      fc.integer(),
      fc.double({ noNaN: true }).map(Math.fround),
      fc.integer({ min: -99_999, max: 99_999 }).map((k) => k / 10),
      fc.integer({ min: -9_999_999, max: 9_999_999 }).map((k) => k / 1000),
      fc.constantFrom(-0, 0, 0.1, 0.3, 1e21, -2147483648, 2147483647, 2147483648, 214748.3648, Infinity, Number.MIN_VALUE),
    ];
    // Columns of one kind of number (what compaction is for), with now and then a value of another kind.
    const column = fc.tuple(fc.integer({ min: 0, max: kinds.length - 1 }), fc.array(fc.oneof(...kinds), { maxLength: 2 })).chain(([k, odd]) =>
      fc.array(kinds[k]!, { minLength: 14, maxLength: 80 }).chain((vs) => fc.shuffledSubarray([...vs, ...odd], { minLength: vs.length + odd.length })),
    );
    fc.assert(
      fc.property(column, fc.array(fc.constantFrom('DM-400X', 'ü', '', 'a'), { minLength: 0, maxLength: 60 }), (values, strs) => {
        const nums = Float64Array.from(values);
        const c = compactNumbers(nums);
        if (c) expect(c.n.byteLength).toBeLessThan(nums.byteLength);
        const d = dictionary(strs);
        const wire = { c: 2, k: 4, a: true, l: Uint32Array.from([values.length, strs.length]), e: { c: values.length + strs.length, k: -1, ks: Uint8Array.from([...values.map(() => 2), ...strs.map(() => 3)]), a: true, ...(c ? { n: c.n, ...(c.nd ? { nd: c.nd } : {}) } : nums.length > 0 ? { n: nums } : {}), ...(d ? { sd: d.sd, si: d.si } : strs.length > 0 ? { s: strs } : {}) } };
        const got = assembleShredded(unpackr.unpack(packr.pack(wire)), 2, 'f');
        expect(got).toEqual([values, strs]);
      }),
      { numRuns: 500 },
    );
  });

  it('go compact for a range inside a block (views of the compacted block numbers), exactly, in every format', async () => {
    const ts = Array.from({ length: 60 }, (_, i) => 1_763_784_000_000 + i * 1000);
    const rec = ts.map((_, i) => ({ d: i / 10 - 2, pair: [i, -i - 0.25], f: Math.fround(i * 0.3), z: i % 7 === 0 ? -0 : i, s: `m${i % 3}`, big: i * 1e300 }));
    const { bytes, entry } = block(ts, { rec }, 0, ts.length, 'always');
    const whole = decodeBlockColumns(bytes.subarray(entry.offset, entry.offset + entry.length), entry);
    for (const [lo, hi] of [
      [0, 60],
      [7, 41],
      [23, 24],
      [40, 60],
    ] as const) {
      const windows = new Map<number, Source[]>([[0, [blockSource(whole)]]]);
      const spec = { ...key, from: ts[lo]!, to: ts[hi - 1]! + 1 };
      const columnar = columnarSeries('s', key, windows, spec.from, spec.to, undefined)!;
      const merged = mergeWindows(windows, spec, undefined);
      const negZero = (_k: string, v: unknown) => (Object.is(v, -0) ? '-0' : v);
      expect(JSON.stringify(await sdkRecords([columnar], true), negZero)).toBe(JSON.stringify(recordsOf(merged.ts, merged.fields), negZero));
      // JSON and NDJSON of the same slices: the same text as from the values.
      const plain: SeriesResult[] = [{ id: 's', ...key, ...merged }];
      for (const format of ['json', 'ndjson'] as const) expect(await text(format, [columnar])).toBe(await text(format, plain));
    }
  });

  it('are compact only when the client asks (Accept: application/msgpack; columns=2)', () => {
    const node = { path: 'f', count: 20, kind: 2, kinds: null, nums: Float64Array.from({ length: 20 }, (_, i) => i), strs: [], bools: new Uint8Array(0), lens: new Uint32Array(0), shapes: [], shapeIds: null, elem: null, children: new Map() } as const;
    expect(nodeWire(node, undefined).n).toBeInstanceOf(Float64Array);
    expect(nodeWire(node, undefined, true).n).toBeInstanceOf(Uint8Array);
  });

  it('count their compact numbers in the budget of the block cache that holds the block, once', async () => {
    const ts = Array.from({ length: 60 }, (_, i) => 1_763_784_000_000 + i * 1000);
    const rec = ts.map((_, i) => ({ n: i, f: Math.fround(i * 0.3), s: `m${i % 3}` }));
    const { bytes, entry } = block(ts, { rec }, 0, ts.length, 'always');
    const whole = decodeBlockColumns(bytes.subarray(entry.offset, entry.offset + entry.length), entry);
    const cache = new FrequencyAdmissionCache<BlockColumns>(1 << 20);
    cache.set('b', whole, 1000);
    const windows = new Map<number, Source[]>([[0, [blockSource(whole)]]]);
    const columnar = columnarSeries('s', key, windows, ts[0]!, ts[59]! + 1, undefined)!;
    await sdkRecords([columnar], false);
    expect(cache.bytes).toBe(1000); // plain columns: nothing kept beside the block
    await sdkRecords([columnar], true);
    // The n and f leaves of 60 values, compacted to 1 and 4 bytes per value, and the s leaf's dictionary (an index byte per value).
    const charged = cache.bytes - 1000;
    expect(charged).toBeGreaterThanOrEqual(60 * (1 + 4 + 1));
    await sdkRecords([columnar], true);
    expect(cache.bytes - 1000).toBe(charged); // kept once per block, not per answer
    // A part of the block: its strings are a slice made for the answer, whose dictionary is not kept.
    await sdkRecords([columnarSeries('s', key, windows, ts[10]!, ts[50]!, undefined)!], true);
    expect(cache.bytes - 1000).toBe(charged);
  });

  it('are refused (null) when blocks overlap in time or hot data takes part', () => {
    const { bytes, entry } = block([1, 2], { v: [1, 2] }, 0, 2, 'auto');
    const cols = decodeBlockColumns(bytes.subarray(entry.offset, entry.offset + entry.length), entry);
    expect(columnarSeries('s', key, new Map([[0, [blockSource(cols), blockSource(cols)]]]), 0, 10, undefined)).toBeNull();
    expect(columnarSeries('s', key, new Map([[0, [blockSource(cols), { data: { ts: [3], fields: { v: [3] } }, sortedUnique: false }]]]), 0, 10, undefined)).toBeNull();
  });
});
