import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { S4Client, S4ClosedError, S4ValidationError, S4WriteError } from '../src/index.js';
import { FakeS4, sample, until } from './fake-server.js';

let server: FakeS4;
beforeEach(async () => {
  server = await new FakeS4().start();
});
afterEach(async () => {
  await server.stop();
});

const fast = { retries: 8, minDelayMs: 1, maxDelayMs: 20 };

describe('S4Writer', () => {
  it('sends full batches, a timed partial batch, and the rest on close()', async () => {
    const writer = new S4Client({ url: server.url }).writer({ maxBatch: 10, flushMs: 30 });
    for (let i = 0; i < 25; i++) await writer.write(sample(i));
    // the third request is the partial batch, sent by the flushMs timer alone
    await server.received(3);
    await until(() => writer.stats().inFlight === 0, 'the timed batch acknowledged');
    expect(server.requests.map((r) => r.samples)).toEqual([10, 10, 5]);
    await writer.write([sample(100), sample(101)]);
    await writer.close();
    expect(server.requests.map((r) => r.samples)).toEqual([10, 10, 5, 2]);
    expect(server.store.size).toBe(27);
    expect(writer.stats()).toMatchObject({ acknowledged: 27, batches: 4, buffered: 0, inFlight: 0 });
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    // The first requests are held until `concurrency` of them are in flight at once (so the limit is
    // reached whatever the machine's speed); later ones take 10 ms, a slow server, so they overlap.
    let opened: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (opened = resolve));
    server.writeHook = async () => {
      if (server.inFlightWrites >= 3) opened();
      await gate;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return undefined;
    };
    const writer = new S4Client({ url: server.url }).writer({ maxBatch: 5, concurrency: 3, maxBuffered: 1000 });
    for (let i = 0; i < 200; i++) await writer.write(sample(i));
    await writer.close();
    expect(server.maxInFlightWrites).toBe(3);
    expect(server.store.size).toBe(200);
  });

  it('applies back-pressure: write() waits while maxBuffered samples are unacknowledged', async () => {
    const release: (() => void)[] = [];
    server.writeHook = () => new Promise((resolve) => release.push(() => resolve(undefined)));
    const writer = new S4Client({ url: server.url }).writer({ maxBatch: 10, concurrency: 2, maxBuffered: 30, flushMs: 1000 });
    let accepted = 0;
    const producer = (async () => {
      for (let i = 0; i < 100; i++) {
        await writer.write(sample(i));
        accepted++;
      }
    })();
    // Two full batches held by the server, and the buffer full: the 30th write is waiting.
    await until(() => release.length === 2 && writer.stats().buffered === 30, 'two held batches and a full buffer');
    await new Promise((resolve) => setImmediate(resolve)); // a write that was not blocked would have returned by now
    expect(accepted).toBe(29); // the 30th write fills the buffer and waits
    expect(writer.stats().buffered).toBe(30);
    while (accepted < 100) {
      // Acknowledge one held batch, then wait for the producer to refill the buffer (or finish).
      await until(() => release.length > 0, 'a held batch');
      const before = accepted;
      release.shift()?.();
      await until(() => accepted > before && (writer.stats().buffered === 30 || accepted === 100), 'the producer to refill the buffer');
      expect(writer.stats().buffered).toBeLessThanOrEqual(30);
    }
    await producer;
    expect(accepted).toBe(100);
    // Drain: answer every held request and every later one at once.
    server.writeHook = undefined;
    const closing = writer.close();
    while (release.length > 0) release.shift()?.();
    await closing;
    expect(server.store.size).toBe(100);
  });

  it('retries failed batches with backoff', async () => {
    let calls = 0;
    server.writeHook = () => (++calls % 2 === 1 ? { status: 503, body: { error: { code: 'not_ready', message: 'busy' } } } : undefined);
    const writer = new S4Client({ url: server.url, retry: fast }).writer({ maxBatch: 7 });
    for (let i = 0; i < 50; i++) await writer.write(sample(i));
    await writer.close();
    expect(server.store.size).toBe(50);
    expect(writer.stats().retries).toBeGreaterThan(0);
  });

  it('survives the server going away mid-stream without losing a sample', async () => {
    const client = new S4Client({ url: server.url, retry: { retries: 20, minDelayMs: 5, maxDelayMs: 50 } });
    const writer = client.writer({ maxBatch: 50, concurrency: 4, flushMs: 5 });
    const stored = server.store;
    const port = server.port;
    for (let i = 0; i < 5000; i++) {
      if (i === 2000) {
        await server.stop();
        setTimeout(() => {
          const next = new FakeS4();
          // the restarted server keeps its data (as S4 does: hot tier log on disk)
          for (const [k, v] of stored) next.store.set(k, v);
          void next.start(port).then(() => (server = next));
        }, 150);
      }
      await writer.write(sample(i));
    }
    await writer.close();
    expect(server.store.size).toBe(5000);
    expect(writer.stats().acknowledged).toBe(5000);
  });

  it('after a permanent failure, rejects flush, close and further writes with S4WriteError', async () => {
    server.writeHook = (samples) => (samples.some((s) => s.ts === 1_700_000_000_015) ? { status: 400, body: { error: { code: 'invalid_request', message: 'no' } } } : undefined);
    const errors: S4WriteError[] = [];
    const writer = new S4Client({ url: server.url }).writer({ maxBatch: 10, concurrency: 1, onError: (e) => errors.push(e) });
    const writes = (async () => {
      for (let i = 0; i < 100; i++) await writer.write(sample(i));
    })();
    await expect(writes).rejects.toBeInstanceOf(S4WriteError);
    const error = (await writer.close().catch((e: unknown) => e)) as S4WriteError;
    expect(error).toBeInstanceOf(S4WriteError);
    expect(error.unsentSamples).toBeGreaterThan(0);
    expect(error.message).toContain('no');
    expect(errors).toEqual([error]);
    await expect(writer.write(sample(200))).rejects.toBe(error);
    expect(server.store.size).toBe(10);
  });

  it('rejects a malformed sample without buffering it, and writes after close()', async () => {
    const writer = new S4Client({ url: server.url }).writer();
    await expect(writer.write({ metric: 'm', ts: Number.NaN, fields: {} })).rejects.toBeInstanceOf(S4ValidationError);
    expect(writer.stats().buffered).toBe(0);
    await writer.close();
    await expect(writer.write(sample(1))).rejects.toBeInstanceOf(S4ClosedError);
    expect(server.requests).toHaveLength(0);
  });

  it('validates its options', () => {
    const client = new S4Client({ url: server.url });
    expect(() => client.writer({ maxBatch: 0 })).toThrow(/maxBatch/);
    expect(() => client.writer({ concurrency: 1.5 })).toThrow(/concurrency/);
  });
});
