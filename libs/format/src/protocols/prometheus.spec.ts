import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeReadRequest, decodeReadResponse, decodeWriteRequest, decodeWriteRequestV2, encodeReadRequest, encodeReadResponse, encodeWriteRequest, encodeWriteRequestV2, type DecodedRead, type PromSeries } from './prometheus.js';
import { PbWriter } from './protobuf.js';
import { snappyCompress, snappyDecompress, snappyLength } from './snappy.js';

const text = fc.string({ unit: 'binary', maxLength: 20 });
const series: fc.Arbitrary<PromSeries> = fc.integer({ min: 0, max: 6 }).chain((n) =>
  fc.record({
    labels: fc.array(fc.tuple(text, text), { maxLength: 5 }),
    ts: fc.array(fc.integer({ min: -1e15, max: 4_102_444_800_000 }), { minLength: n, maxLength: n }),
    values: fc.array(fc.double().filter((v) => !Number.isNaN(v)), { minLength: n, maxLength: n }),
  }),
);

describe('snappy', () => {
  it('decompress(compress(x)) is x: random bytes, runs, repeated text', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 3000 }),
      fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4000 })).map(([unit, times]) => Uint8Array.from({ length: unit.length * times }, (_, i) => unit[i % unit.length]!)),
      fc.array(fc.constantFrom('cpu', 'host=a', ',', ' ', '0.5', '\n', 'z'.repeat(70)), { maxLength: 400 }).map((p) => new TextEncoder().encode(p.join(''))),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        const c = snappyCompress(b);
        expect(snappyLength(c)).toBe(b.length);
        expect(snappyDecompress(c)).toEqual(b);
      }),
      { numRuns: 300 },
    );
  });

  it('compresses repetitive input', () => {
    const b = new TextEncoder().encode('up{job="prometheus",instance="localhost:9090"} 1\n'.repeat(1000));
    expect(snappyCompress(b).length).toBeLessThan(b.length / 10);
  });

  // Spec vectors written by hand from format_description.txt.
  it('reads every element kind of the spec', () => {
    // length 9; literal "abcd" (tag 3<<2); copy-1 len 4 offset 4 (tag 0b000_000_01); literal "x"
    expect(new TextDecoder().decode(snappyDecompress(Uint8Array.from([9, 3 << 2, 97, 98, 99, 100, 0b00000001, 4, 0, 120])))).toBe('abcdabcdx');
    // copy-2 len 6 offset 1 (an overlapping run); copy-4 len 2 offset 7
    expect(new TextDecoder().decode(snappyDecompress(Uint8Array.from([9, 0, 97, (5 << 2) | 2, 1, 0, (1 << 2) | 3, 7, 0, 0, 0])))).toBe('aaaaaaaaa');
    // literal with a 1-byte length (60): 61 bytes
    const long = snappyDecompress(Uint8Array.from([61, 60 << 2, 60, ...new Array<number>(61).fill(65)]));
    expect(long.length).toBe(61);
  });

  it('refuses corrupt and hostile blocks instead of reading out of range', () => {
    expect(() => snappyDecompress(Uint8Array.from([]))).toThrow(/truncated length/);
    expect(() => snappyDecompress(Uint8Array.from([5, 4 << 2, 97]))).toThrow(/past the end of the input/);
    expect(() => snappyDecompress(Uint8Array.from([4, 0b00000001, 9]))).toThrow(/before the start/);
    expect(() => snappyDecompress(Uint8Array.from([3, 0, 97]))).toThrow(/announced 3/);
    expect(() => snappyDecompress(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]), 1 << 20)).toThrow(/over the limit/);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (junk) => {
        try {
          snappyDecompress(junk, 1 << 16);
        } catch (e) {
          expect((e as Error).message).toMatch(/^snappy: /);
        }
      }),
    );
  });
});

describe('Prometheus remote-storage messages', () => {
  it('v1 and v2 write requests round-trip', () => {
    fc.assert(
      fc.property(fc.array(series, { maxLength: 5 }), (list) => {
        expect(decodeWriteRequest(encodeWriteRequest(list))).toEqual({ series: list, histograms: 0, stale: 0 });
        expect(decodeWriteRequestV2(encodeWriteRequestV2(list))).toEqual({ series: list, histograms: 0, stale: 0 });
      }),
      { numRuns: 200 },
    );
  });

  it('read requests and responses round-trip', () => {
    const matcher = fc.record({ type: fc.constantFrom('EQ' as const, 'NEQ' as const, 'RE' as const, 'NRE' as const), name: text, value: text });
    const read: fc.Arbitrary<DecodedRead> = fc.record({
      queries: fc.array(fc.record({ start: fc.nat(), end: fc.nat(), matchers: fc.array(matcher, { maxLength: 4 }) }), { maxLength: 3 }),
      acceptedResponseTypes: fc.array(fc.constantFrom(0, 1), { maxLength: 2 }),
    });
    fc.assert(
      fc.property(read, (r) => {
        expect(decodeReadRequest(encodeReadRequest(r))).toEqual(r);
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(series, { maxLength: 3 }), { maxLength: 3 }), (results) => {
        expect(decodeReadResponse(encodeReadResponse(results))).toEqual(results);
      }),
    );
  });

  it('drops staleness markers, counts native histograms, skips unknown fields', () => {
    const stale = new Uint8Array(8);
    new DataView(stale.buffer).setUint32(0, 2, true);
    new DataView(stale.buffer).setUint32(4, 0x7ff00000, true);
    // The second sample carries the marker's exact bits; unknown fields (77, 15) are skipped.
    const w2 = new PbWriter();
    w2.message(1, (t) => {
      t.message(1, (l) => l.string(1, '__name__').string(2, 'up'));
      t.message(2, (x) => x.double(1, 1).uint(2, 1000).uint(77, 5));
      t.message(2, (x) => {
        x.tag(1, 1);
        (x as unknown as { ensure(n: number): void }).ensure(8);
        const self = x as unknown as { buf: Uint8Array; pos: number };
        self.buf.set(stale, self.pos);
        self.pos += 8;
        x.uint(2, 2000);
      });
      t.message(3, (x) => x.double(1, 5));
      t.message(4, (x) => x.uint(1, 3));
    });
    w2.uint(15, 7);
    expect(decodeWriteRequest(w2.finish())).toEqual({ series: [{ labels: [['__name__', 'up']], ts: [1000], values: [1] }], histograms: 1, stale: 1 });
  });

  it('refuses malformed messages with a protobuf error', () => {
    expect(() => decodeWriteRequest(Uint8Array.from([0x0a, 0x05, 0x0a]))).toThrow(/protobuf: length 5 runs past/);
    expect(() => decodeWriteRequest(Uint8Array.from([0x0b]))).toThrow(/protobuf/);
    expect(() => decodeWriteRequestV2(encodeWriteRequestV2([{ labels: [['a', 'b']], ts: [], values: [] }]).slice(0, -1))).toThrow(/protobuf/);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (junk) => {
        try {
          decodeWriteRequest(junk);
          decodeReadRequest(junk);
        } catch (e) {
          expect((e as Error).message).toMatch(/^protobuf: /);
        }
      }),
    );
  });
});

describe('golden: a remote-write body sent by Prometheus 2.42 (scraping itself)', () => {
  const dir = new URL('../../testdata/protocols/', import.meta.url);
  const body = readFileSync(new URL('prometheus-2.42-remote-write-v1.snappy', dir));
  // Values as strings in the JSON: some are NaN (a summary with no observations).
  const expected = (JSON.parse(readFileSync(new URL('prometheus-2.42-remote-write-v1.json', dir), 'utf8')) as { labels: [string, string][]; ts: number[]; values: string[] }[]).map((s) => ({ ...s, values: s.values.map(Number) }));

  it('decodes to the committed series, and re-encodes to the same protobuf bytes', () => {
    const raw = snappyDecompress(body);
    const decoded = decodeWriteRequest(raw);
    expect(decoded).toEqual({ series: expected, histograms: 0, stale: 0 });
    expect(expected).toHaveLength(353);
    expect(Buffer.from(encodeWriteRequest(decoded.series)).equals(Buffer.from(raw))).toBe(true);
    expect(snappyDecompress(snappyCompress(raw))).toEqual(raw);
  });
});
