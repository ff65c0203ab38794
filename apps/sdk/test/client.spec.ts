import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { S4Client, S4HttpError, S4NetworkError, S4TimeoutError, S4ValidationError, type RetryEvent, type Sample } from '../src/index.js';
import { FakeS4, sample } from './fake-server.js';

let server: FakeS4;
beforeEach(async () => {
  server = await new FakeS4().start();
});
afterEach(async () => {
  await server.stop();
});

const fast = { retries: 5, minDelayMs: 1, maxDelayMs: 5 };

describe('S4Client.write', () => {
  it('sends samples as MessagePack with the auth and namespace headers', async () => {
    const client = new S4Client({ url: server.url, apiKey: 'k1', namespace: 'iot' });
    await client.write([sample(1), { metric: 'm', ts: 5, fields: { s: 'x', nested: { a: [1, 2] }, ok: true, none: null } }]);
    const req = server.requests[0];
    expect(req?.headers['content-type']).toBe('application/msgpack');
    expect(req?.headers.authorization).toBe('Bearer k1');
    expect(req?.headers['x-s4-namespace']).toBe('iot');
    // null means absent to the server, so the field is not stored
    expect(server.samples()).toContainEqual({ metric: 'm', tags: {}, ts: 5, fields: { s: 'x', nested: { a: [1, 2] }, ok: true } });
    expect(server.store.size).toBe(2);
  });

  it('treats an undefined field as absent', async () => {
    const client = new S4Client({ url: server.url });
    const flag: boolean = Math.random() > 2;
    await client.write({ metric: 'm', tags: { a: 'b' }, ts: 1, fields: flag ? { v: 1, extra: 'x' } : { v: 1, extra: undefined } });
    expect(server.samples()).toEqual([{ metric: 'm', tags: { a: 'b' }, ts: 1, fields: { v: 1 } }]);
  });

  it('can send JSON instead', async () => {
    const client = new S4Client({ url: server.url, writeFormat: 'json' });
    await client.write(sample(1));
    expect(server.requests[0]?.headers['content-type']).toBe('application/json');
    expect(server.samples()).toEqual([sample(1)]);
  });

  it('rejects malformed samples before sending anything', async () => {
    const client = new S4Client({ url: server.url });
    const bad = [sample(1), { metric: '', ts: 1.5, fields: { v: Number.NaN } }];
    const error = await client.write(bad as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S4ValidationError);
    expect((error as S4ValidationError).issues.map((i) => i.path)).toEqual(['samples[1].metric', 'samples[1].ts', 'samples[1].fields.v']);
    expect(server.requests).toHaveLength(0);
  });

  it('retries 503 and 429 with backoff and reports each retry', async () => {
    let calls = 0;
    server.writeHook = () => (++calls <= 2 ? { status: calls === 1 ? 503 : 429, body: { error: { code: 'not_ready', message: 'starting' } } } : undefined);
    const retries: RetryEvent[] = [];
    const client = new S4Client({ url: server.url, retry: fast, onRetry: (e) => retries.push(e) });
    await client.write([sample(1)]);
    expect(server.store.size).toBe(1);
    expect(retries.map((r) => [r.attempt, (r.error as S4HttpError).status])).toEqual([
      [1, 503],
      [2, 429],
    ]);
  });

  it('does not retry a 400 and exposes the server code, message and issues', async () => {
    server.writeHook = () => ({ status: 400, body: { error: { code: 'invalid_request', message: 'bad sample', details: { issues: [{ path: 'samples.0.ts', message: 'too old' }] } } } });
    const client = new S4Client({ url: server.url, retry: fast });
    const error = (await client.write([sample(1)]).catch((e: unknown) => e)) as S4HttpError;
    expect(error).toBeInstanceOf(S4HttpError);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('bad sample');
    expect(error.issues).toEqual([{ path: 'samples.0.ts', message: 'too old' }]);
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a 500 and keeps its error id', async () => {
    server.writeHook = () => ({ status: 500, body: { error: { code: 'internal', message: 'boom', id: 'err-42' } } });
    const client = new S4Client({ url: server.url, retry: fast });
    const error = (await client.write([sample(1)]).catch((e: unknown) => e)) as S4HttpError;
    expect(error.errorId).toBe('err-42');
    expect(error.message).toContain('err-42');
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after the configured retries with the last error', async () => {
    server.writeHook = () => ({ status: 502, body: 'bad gateway' });
    const client = new S4Client({ url: server.url, retry: { retries: 3, minDelayMs: 1, maxDelayMs: 2 } });
    const error = (await client.write([sample(1)]).catch((e: unknown) => e)) as S4HttpError;
    expect(error).toBeInstanceOf(S4HttpError);
    expect(error.status).toBe(502);
    expect(server.requests).toHaveLength(4);
  });

  it('honours Retry-After as a lower bound on the wait', async () => {
    let calls = 0;
    server.writeHook = () => (++calls === 1 ? { status: 503, headers: { 'retry-after': '0.2' }, body: { error: { code: 'not_ready', message: '' } } } : undefined);
    const retries: RetryEvent[] = [];
    const client = new S4Client({ url: server.url, retry: { retries: 2, minDelayMs: 1, maxDelayMs: 1000 }, onRetry: (e) => retries.push(e) });
    const start = Date.now();
    await client.write([sample(1)]);
    expect(retries[0]?.delayMs).toBe(200);
    expect(Date.now() - start).toBeGreaterThanOrEqual(190);
  });

  it('turns a refused connection into S4NetworkError after retrying', async () => {
    await server.stop();
    const retries: RetryEvent[] = [];
    const client = new S4Client({ url: server.url, retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 }, onRetry: (e) => retries.push(e) });
    const error = (await client.write([sample(1)]).catch((e: unknown) => e)) as S4NetworkError;
    expect(error).toBeInstanceOf(S4NetworkError);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(retries).toHaveLength(2);
  });

  it('times out a request that gets no answer', async () => {
    server.writeHook = () => new Promise(() => undefined);
    const client = new S4Client({ url: server.url, timeoutMs: 50, retry: false });
    await expect(client.write([sample(1)])).rejects.toBeInstanceOf(S4TimeoutError);
  });

  it('splits a batch the server finds too large', async () => {
    server.writeHook = (samples) => (samples.length > 10 ? { status: 413, body: { error: { code: 'limit_exceeded', message: 'too many samples', details: { limit: 'samples', max: 10 } } } } : undefined);
    const client = new S4Client({ url: server.url });
    await client.write(Array.from({ length: 37 }, (_, i) => sample(i)));
    expect(server.store.size).toBe(37);
  });

  it('stops when the caller aborts', async () => {
    server.writeHook = () => new Promise(() => undefined);
    const client = new S4Client({ url: server.url });
    const controller = new AbortController();
    const pending = client.write([sample(1)], { signal: controller.signal });
    await server.received(1); // the request is at the server, which never answers it
    controller.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
  });
});

describe('S4Client reads', () => {
  it('query() joins chunks into typed columns', async () => {
    const client = new S4Client({ url: server.url });
    const samples = Array.from({ length: 25 }, (_, i): Sample => ({ metric: 'env', tags: { room: 'a' }, ts: 1000 + i, fields: i % 5 === 0 ? { t: i } : { t: i, label: `s${i}` } }));
    await client.write(samples);
    await client.write({ metric: 'env', tags: { room: 'b' }, ts: 1000, fields: { t: 1 } });
    server.chunkSize = 10;
    server.sliceBytes = 7;
    const result = await client.query({ metric: 'env', from: 0, to: new Date(2000) });
    expect(result.points).toBe(26);
    expect(result.series.map((s) => s.tags)).toEqual([{ room: 'a' }, { room: 'b' }]);
    const a = result.series[0];
    expect(a?.ts).toBeInstanceOf(Float64Array);
    expect(Array.from(a?.ts ?? [])).toEqual(samples.map((s) => s.ts));
    expect(a?.fields.t).toBeInstanceOf(Float64Array);
    expect(Array.from(a?.fields.t ?? [])).toEqual(samples.map((s) => s.fields.t));
    expect(Array.isArray(a?.fields.label)).toBe(true);
    expect(a?.fields.label?.[0]).toBeNull();
    expect(a?.fields.label?.[1]).toBe('s1');
  });

  it('stream() yields chunks and sends the query as JSON asking for MessagePack', async () => {
    const client = new S4Client({ url: server.url });
    await client.write(Array.from({ length: 30 }, (_, i) => sample(i * 3)));
    server.chunkSize = 4;
    const sizes: number[] = [];
    for await (const chunk of client.stream({ metric: 'm', tags: { dev: 'd0' }, from: 0, to: Number.MAX_SAFE_INTEGER })) sizes.push(chunk.ts.length);
    expect(sizes).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
    const req = server.requests.at(-1);
    expect(req?.headers.accept).toBe('application/msgpack; columns=2');
  });

  it('series(), flush() and ready()', async () => {
    const client = new S4Client({ url: server.url });
    await client.write([sample(1), sample(2)]);
    expect(await client.series({ metric: 'm' })).toHaveLength(2);
    expect(await client.flush()).toMatchObject({ samples: 2 });
    expect(await client.ready()).toBe(true);
    await server.stop();
    expect(await client.ready()).toBe(false);
  });

  it('maps a 404 to S4HttpError with the server code', async () => {
    const client = new S4Client({ url: `${server.url}/nope` });
    const error = (await client.series().catch((e: unknown) => e)) as S4HttpError;
    expect(error).toBeInstanceOf(S4HttpError);
    expect(error.code).toBe('not_found');
  });
});
