import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { blockSource, columnarSeries, mergeWindows, type SeriesResult, type Source } from '@s4/engine';
import { decodeBlockColumns, decodeFooter, encodeSegment, formatProjectionPath, projectBlockColumns, readTrailer, SEGMENT_TRAILER_BYTES, type ShredMode } from '@s4/format';
import { keyPaths, nestedColumns } from '../../libs/format/src/testing/arbitraries.js';
import { encode, type Format } from '../../apps/api/src/roles/api/output/formats.js';
import { MsgpackStreamDecoder } from '../../apps/sdk/src/codec.js';
import { toRecordBatch } from '../../apps/sdk/src/records.js';

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

async function text(format: Format, results: SeriesResult[]): Promise<string> {
  let out = '';
  for await (const piece of encode(format, (async function* () {
    yield* results;
  })())) out += typeof piece === 'string' ? piece : piece.toString('latin1');
  return out;
}

/** The records client.records() would yield for a MessagePack answer. */
async function sdkRecords(results: SeriesResult[]): Promise<{ ts: number; fields: Record<string, unknown> }[]> {
  const chunks: Buffer[] = [];
  for await (const piece of encode('msgpack', (async function* () {
    yield* results;
  })())) chunks.push(typeof piece === 'string' ? Buffer.from(piece) : piece);
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
      });
    });
    await fc.assert(
      fc.asyncProperty(cases, async ({ data, cuts, from, span, fields, shred, format, cached }) => {
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
          expect(JSON.stringify(await sdkRecords(fromColumns))).toBe(JSON.stringify(recordsOf(merged.ts, merged.fields)));
        } else expect(await text(format, fromColumns)).toBe(await text(format, plain));
        // The values built on demand are those of the merging path.
        if (fromColumns.length > 0) expect(JSON.stringify({ ts: columnar!.ts, fields: columnar!.fields })).toBe(JSON.stringify({ ts: merged.ts, fields: merged.fields }));
      }),
      { numRuns: 400 },
    );
  });

  it('are refused (null) when blocks overlap in time or hot data takes part', () => {
    const { bytes, entry } = block([1, 2], { v: [1, 2] }, 0, 2, 'auto');
    const cols = decodeBlockColumns(bytes.subarray(entry.offset, entry.offset + entry.length), entry);
    expect(columnarSeries('s', key, new Map([[0, [blockSource(cols), blockSource(cols)]]]), 0, 10, undefined)).toBeNull();
    expect(columnarSeries('s', key, new Map([[0, [blockSource(cols), { data: { ts: [3], fields: { v: [3] } }, sortedUnique: false }]]]), 0, 10, undefined)).toBeNull();
  });
});
