import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { msgpack } from '@s4/format';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

const LIMITS = {
  S4_MAX_BODY_BYTES: '65536',
  S4_MAX_SAMPLES_PER_REQUEST: '100',
  S4_MAX_FIELDS_PER_SAMPLE: '4',
  S4_MAX_RECORD_BYTES: '512',
  S4_MAX_TAGS: '3',
  S4_MAX_TAG_LENGTH: '16',
  S4_MAX_FUTURE_MS: '900000',
};
const now = Date.now();
const ok = { metric: 'bad.input', tags: { k: 'v' }, ts: now - 60_000, fields: { value: 1 } };

interface Case {
  name: string;
  body: string | Uint8Array;
  type?: string;
  encoding?: string;
  status: number;
  /** Every string must appear in the error message or its details. */
  mentions: string[];
}

const json = (v: unknown) => JSON.stringify(v);
const cases: Case[] = [
  { name: 'body that is not JSON', body: '{"samples":[', status: 400, mentions: ['JSON'] },
  { name: 'JSON that is not an object', body: json([ok]), status: 400, mentions: ['samples'] },
  { name: 'empty object', body: json({}), status: 400, mentions: ['no samples'] },
  { name: 'unknown top-level key', body: json({ samples: [ok], extra: 1 }), status: 400, mentions: ['extra'] },
  { name: 'missing metric', body: json({ samples: [ok, { ...ok, metric: undefined }] }), status: 400, mentions: ['samples[1].metric'] },
  { name: 'empty metric', body: json({ samples: [{ ...ok, metric: '' }] }), status: 400, mentions: ['samples[0].metric', 'empty'] },
  { name: 'timestamp as a string', body: json({ samples: [{ ...ok, ts: '2026-01-01' }] }), status: 400, mentions: ['samples[0].ts'] },
  { name: 'fractional timestamp', body: json({ samples: [{ ...ok, ts: 1.5 }] }), status: 400, mentions: ['samples[0].ts', 'integer'] },
  { name: 'negative timestamp', body: json({ samples: [{ ...ok, ts: -5 }] }), status: 400, mentions: ['samples[0].ts'] },
  { name: 'no fields', body: json({ samples: [{ ...ok, fields: {} }] }), status: 400, mentions: ['samples[0].fields'] },
  { name: 'tag value that is a number', body: json({ samples: [{ ...ok, tags: { k: 5 } }] }), status: 400, mentions: ['samples[0].tags.k'] },
  { name: 'unknown key in a sample', body: json({ samples: [{ ...ok, value: 3 }] }), status: 400, mentions: ['samples[0]', 'value'] },
  { name: 'control character in a metric', body: json({ samples: [{ ...ok, metric: 'a\u0001b' }] }), status: 400, mentions: ['control'] },
  { name: 'columns of different lengths', body: json({ series: [{ metric: 'bad.input', ts: [now - 2000, now - 1000], fields: { value: [1] } }] }), status: 400, mentions: ['series[0].fields.value', '1 values'] },
  { name: 'bad NDJSON line', body: `${json(ok)}\n${json(ok)}\n{nope\n`, type: 'application/x-ndjson', status: 400, mentions: ['line 3'] },
  { name: 'invalid MessagePack', body: Uint8Array.of(0xc1, 0xc1), type: 'application/msgpack', status: 400, mentions: ['MessagePack'] },
  { name: 'unsupported content type', body: 'x', type: 'text/plain', status: 415, mentions: ['Content-Type'] },
  { name: 'too many samples', body: json({ samples: Array.from({ length: 101 }, (_, i) => ({ ...ok, ts: ok.ts - i })) }), status: 413, mentions: ['S4_MAX_SAMPLES_PER_REQUEST', '100'] },
  { name: 'body too large', body: json({ samples: [{ ...ok, fields: { s: 'x'.repeat(70_000) } }] }), status: 413, mentions: ['S4_MAX_BODY_BYTES', '65536'] },
  { name: 'too many fields', body: json({ samples: [{ ...ok, fields: { a: 1, b: 2, c: 3, d: 4, e: 5 } }] }), status: 400, mentions: ['S4_MAX_FIELDS_PER_SAMPLE=4', 'samples[0].fields'] },
  { name: 'record too large', body: json({ samples: [{ ...ok, fields: { s: 'x'.repeat(600) } }] }), status: 413, mentions: ['S4_MAX_RECORD_BYTES', '512'] },
  { name: 'too many tags', body: json({ samples: [{ ...ok, tags: { a: '1', b: '2', c: '3', d: '4' } }] }), status: 400, mentions: ['S4_MAX_TAGS=3'] },
  { name: 'tag value too long', body: json({ samples: [{ ...ok, tags: { k: 'v'.repeat(17) } }] }), status: 400, mentions: ['S4_MAX_TAG_LENGTH=16', 'samples[0].tags.k'] },
  { name: 'JSON with a truncated UTF-8 sequence', body: Buffer.concat([Buffer.from('{"samples":[{"metric":"bad.input","ts":1,"fields":{"s":"a'), Buffer.of(0xe2, 0x82), Buffer.from('"}}]}')]), status: 400, mentions: ['UTF-8'] },
  { name: 'NDJSON with an invalid UTF-8 byte', body: Buffer.concat([Buffer.from('{"metric":"bad.input","ts":1,"fields":{"s":"'), Buffer.of(0xff), Buffer.from('"}}\n')]), type: 'application/x-ndjson', status: 400, mentions: ['UTF-8'] },
  { name: 'gzip header on a body that is not gzip', body: json({ samples: [ok] }), encoding: 'gzip', status: 400, mentions: ['gzip'] },
  { name: 'unsupported Content-Encoding', body: json({ samples: [ok] }), encoding: 'br', status: 415, mentions: ['Content-Encoding br', 'gzip'] },
  { name: 'field value nested 30,000 deep', body: `{"samples":[{"metric":"bad.input","ts":1,"fields":{"v":${'['.repeat(30_000)}${']'.repeat(30_000)}}}]}`, status: 400, mentions: ['S4_MAX_NESTING_DEPTH=64'] },
  { name: 'field value nested 2,000 deep', body: `{"samples":[{"metric":"bad.input","ts":1,"fields":{"v":${'['.repeat(2_000)}${']'.repeat(2_000)}}}]}`, status: 400, mentions: ['S4_MAX_NESTING_DEPTH=64', 'samples[0].fields.v'] },
  { name: 'field value nested 1,000 deep in a column', body: json({ series: [{ metric: 'bad.input', ts: [now - 1000], fields: { v: [JSON.parse('{"a":'.repeat(1_000) + '1' + '}'.repeat(1_000)) as unknown] } }] }), status: 400, mentions: ['S4_MAX_NESTING_DEPTH=64'] },
  { name: '__proto__ as a field name', body: '{"samples":[{"metric":"bad.input","ts":1,"fields":{"__proto__":1}}]}', status: 400, mentions: ['__proto__'] },
  // Spelled with an escape, it passes a plain search for `__proto__`: the JSON parser's poisoning check must still see it.
  { name: '__proto__ as a field name, escaped', body: '{"samples":[{"metric":"bad.input","ts":1,"fields":{"\\u005f_proto__":1}}]}', status: 400, mentions: ['JSON'] },
  { name: '__proto__ as a field name (MessagePack)', body: msgpack.pack({ series: [{ metric: 'bad.input', ts: [now - 1000], fields: JSON.parse('{"__proto__":[1]}') as object }] }), type: 'application/msgpack', status: 400, mentions: ['__proto__'] },
  { name: 'timestamp too far in the future', body: json({ samples: [{ ...ok, ts: now + 3_600_000 }] }), status: 400, mentions: ['S4_MAX_FUTURE_MS=900000', 'samples[0].ts'] },
];

describe('bad input is refused with a useful message and changes nothing', () => {
  let s4: S4Process;
  beforeAll(async () => {
    s4 = await S4Process.start(await modeEnv('embedded', LIMITS));
  });
  afterAll(async () => {
    await s4?.stop();
  });

  it.each(cases)('$name → $status', async (c) => {
    const headers: Record<string, string> = { 'content-type': c.type ?? 'application/json', ...(c.encoding ? { 'content-encoding': c.encoding } : {}) };
    const r = await fetch(`${s4.url}/v1/write`, { method: 'POST', headers, body: c.body });
    const text = await r.text();
    expect(r.status, text).toBe(c.status);
    const body = JSON.parse(text) as { error: { code: string; message: string } };
    expect(body.error.code).toMatch(/^(invalid_request|limit_exceeded|unsupported_media_type|unsupported_encoding)$/);
    for (const m of c.mentions) expect(text).toContain(m);
  });

  it.each([
    ['missing metric', 'from=0&to=10', 'metric'],
    ['to before from', 'metric=m&from=10&to=5', 'query.to'],
    ['time that is not a time', 'metric=m&from=yesterday&to=5', 'query.from'],
    ['unknown format', 'metric=m&from=0&to=5&format=xml', 'query.format'],
    ['tag without a colon', 'metric=m&from=0&to=5&tag=k', 'key:value'],
    ['unknown parameter', 'metric=m&from=0&to=5&limit=3', 'limit'],
  ])('query with %s → 400', async (_name, qs, mention) => {
    const r = await fetch(`${s4.url}/v1/query?${qs}`);
    const text = await r.text();
    expect(r.status, text).toBe(400);
    expect(text).toContain(mention);
  });

  it('wrote nothing from any refused request', async () => {
    const r = await fetch(`${s4.url}/v1/query?metric=bad.input&from=0&to=${now + 86_400_000}`);
    expect(await r.json()).toEqual({ series: [] });
    const listed = (await (await fetch(`${s4.url}/v1/series`)).json()) as { series: unknown[] };
    expect(listed.series).toEqual([]);
  });

  it('reads a gzip body (the encoding is honoured, not ignored)', async () => {
    const body = gzipSync(JSON.stringify({ samples: [{ ...ok, metric: 'bad.input.gzip' }] }));
    const r = await fetch(`${s4.url}/v1/write`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
    expect(r.status, await r.text()).toBe(204);
    const q = (await (await fetch(`${s4.url}/v1/query?metric=bad.input.gzip&from=0&to=${now}`)).json()) as { series: { ts: number[] }[] };
    expect(q.series[0]?.ts).toEqual([ok.ts]);
  });

  it('accepts the same sample once it is valid (the checks are not refusing everything)', async () => {
    const r = await fetch(`${s4.url}/v1/write`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: msgpack.pack({ samples: [ok] }) });
    expect(r.status).toBe(204);
    const q = (await (await fetch(`${s4.url}/v1/query?metric=bad.input&tag=k:v&from=0&to=${now}`)).json()) as { series: { ts: number[] }[] };
    expect(q.series[0]?.ts).toEqual([ok.ts]);
  });
});
