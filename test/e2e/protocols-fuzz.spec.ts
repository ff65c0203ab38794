import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeReadResponse, encodeReadRequest, encodeWriteRequest, snappyCompress, snappyDecompress } from '@s4/format';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

/**
 * Hostile input on every protocol endpoint: whatever arrives, the answer is a 4xx or a success,
 * never a 500, and a refused write leaves nothing behind. On Redis + S3 (the other protocol
 * suites run embedded; the Influx one both).
 */
describe('protocol endpoints under random input', () => {
  let s4: S4Process;
  let ns: string;
  beforeAll(async () => {
    const env = await modeEnv('redis+s3');
    ns = env.S4_NAMESPACE!;
    s4 = await S4Process.start(env);
  });
  afterAll(async () => {
    await s4?.stop();
  });

  it('line protocol: random texts built from the grammar\'s pieces', async () => {
    const piece = fc.constantFrom('m', 'cpu', ',', ' ', '=', '"', '\\', 'host', 'v', '1', '1i', '-2u', 't', 'FALSE', '1e9', '\n', '#', '1700000000000000000', '99999999999999999999999', 'é', '__proto__', 'constructor', '\r', '\t');
    const text = fc.array(piece, { maxLength: 60 }).map((p) => p.join(''));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(text, fc.constantFrom('/write', '/api/v2/write'), fc.constantFrom('ns', 'ms', 's', 'x'), async (body, path, precision) => {
        const db = path === '/write' ? 'db' : 'bucket';
        const metric = `fz${n++}`;
        const r = await fetch(`${s4.url}${path}?${db}=${ns}&precision=${precision}`, { method: 'POST', body: `${metric} v=1 1\n${body}` });
        const answer = await r.text();
        expect(r.status, answer).toBeLessThan(500);
        if (r.status !== 204) {
          const q = await fetch(`${s4.url}/v1/series?metric=${metric}`);
          expect(((await q.json()) as { series: unknown[] }).series, answer).toEqual([]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('remote write and read: random bytes, random snappy blocks, random messages', async () => {
    // A valid write reads back through remote read, end to end on Redis + S3.
    const ts = Date.now() - 60_000;
    const w = await fetch(`${s4.url}/api/v1/write`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body: snappyCompress(encodeWriteRequest([{ labels: [['__name__', 'fz_ok'], ['k', 'v']], ts: [ts], values: [4.25] }])) });
    expect(w.status).toBe(204);
    const read = await fetch(`${s4.url}/api/v1/read`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body: snappyCompress(encodeReadRequest({ queries: [{ start: ts - 1, end: ts + 1, matchers: [{ type: 'EQ', name: '__name__', value: 'fz_ok' }] }], acceptedResponseTypes: [] })) });
    expect(decodeReadResponse(snappyDecompress(new Uint8Array(await read.arrayBuffer())))).toEqual([[{ labels: [['__name__', 'fz_ok'], ['k', 'v']], ts: [ts], values: [4.25] }]]);

    const body = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.uint8Array({ maxLength: 200 }).map((b) => snappyCompress(b)),
      fc
        .array(fc.record({ labels: fc.array(fc.tuple(fc.constantFrom('__name__', 'job', '', 'a', '__proto__'), fc.string({ maxLength: 5 })), { maxLength: 3 }), ts: fc.array(fc.integer({ min: -5, max: 2e12 }), { maxLength: 3 }), values: fc.array(fc.double(), { maxLength: 3 }) }), { maxLength: 3 })
        .map((series) => snappyCompress(encodeWriteRequest(series.map((s) => ({ ...s, values: s.ts.map((_, i) => s.values[i] ?? 0) }))))),
      fc
        .record({ start: fc.integer({ min: -10, max: 2e12 }), end: fc.integer({ min: -10, max: 2e12 }), name: fc.constantFrom('__name__', 'job', ''), value: fc.constantFrom('up', '', '.*', '(', 'x|y') })
        .map((q) => snappyCompress(encodeReadRequest({ queries: [{ start: q.start, end: q.end, matchers: [{ type: 'RE', name: q.name, value: q.value }] }], acceptedResponseTypes: [] }))),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('/api/v1/write', '/api/v1/read'), fc.boolean(), async (b, path, snappy) => {
        const r = await fetch(`${s4.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', ...(snappy ? { 'content-encoding': 'snappy' } : {}) }, body: b });
        expect(r.status, await r.text()).toBeLessThan(500);
      }),
      { numRuns: 200 },
    );
  });

  it('PromQL and Graphite: random queries and parameters', async () => {
    const token = fc.constantFrom('up', 'rate(', 'sum', ' by ', '(job)', '{', '}', 'a="b"', ',', '=~', '"[', '[5m]', '[0s]', ')', ' offset ', '-1h', '1', '+', 'avg_over_time(', 'topk(', '@', '[1m:10s]', 'without', 'count', '"', '\\', 'nan', 'Inf', '__name__', '!~', '""');
    const query = fc.array(token, { maxLength: 12 }).map((t) => t.join(''));
    const time = fc.constantFrom('0', '1700000000', '-1', 'now', '2026-01-01T00:00:00Z', '1e99', 'NaN', '');
    const step = fc.constantFrom('1', '15s', '0', '-1', '1h', 'x', '0.001');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('query', 'query_range', 'series', 'labels', 'label/job/values', 'label/__name__/values'), query, time, time, step, async (p, q, start, end, st) => {
        const params = new URLSearchParams({ query: q, 'match[]': q, time: start, start, end, step: st });
        const r = await fetch(`${s4.url}/api/v1/${p}?${params}`);
        const text = await r.text();
        expect(r.status, `${p} ${params}: ${text.slice(0, 300)}`).toBeLessThan(500);
        expect(JSON.parse(text)).toHaveProperty('status');
      }),
      { numRuns: 300 },
    );
    const target = fc.constantFrom('a', 'a.*', 'a.{b,c', 'a.[', '*', 'sum(a)', '', 'a;b=c');
    await fc.assert(
      fc.asyncProperty(target, fc.constantFrom('-1h', 'now', '0', 'x', '-5years'), fc.constantFrom('3', '4', '1000', 'x', '-1'), async (t, from, max) => {
        const r = await fetch(`${s4.url}/render?${new URLSearchParams({ target: t, from, maxDataPoints: max })}`);
        expect(r.status, await r.text()).toBeLessThan(500);
      }),
      { numRuns: 100 },
    );
  });
});
