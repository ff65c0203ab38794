import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '@s4/core';
import { RedisHotTier, S3ObjectStore } from '@s4/storage';
import { expectOk, normalise, post, queryAll } from '../support/client.js';
import { ExpectedStore } from '../support/model.js';
import { PrivateRedis, PrivateS3, StallingProxy, sleep } from '../support/private-servers.js';
import { S4Process, freePort } from '../support/s4-process.js';
import { tempDir, uniqueNamespace } from '../support/servers.js';

/**
 * Faults of the real stores under a whole S4 process: S3 frozen (SIGSTOP), Redis killed and
 * restarted, Redis full. The servers are this file's own, so freezing them disturbs no one.
 */

const H = 3_600_000;
const S3_TIMEOUT_MS = 1_500;
const HEDGE_AFTER_MS = 300;
const REDIS_TIMEOUT_MS = 1_000;
/** Any answer slower than this counts as hung: the old code waited for the outage to end. */
const HUNG_MS = 15_000;

interface Timed {
  status: number;
  ms: number;
  text: string;
  headers: Headers;
}

async function timed(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(HUNG_MS) });
  const text = await r.text();
  return { status: r.status, ms: performance.now() - started, text, headers: r.headers };
}

interface Sample {
  metric: string;
  tags: Record<string, string>;
  ts: number;
  fields: Record<string, number>;
}

function write(base: string, samples: Sample[]): Promise<Timed> {
  return timed(`${base}/v1/write`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ samples }) });
}

function queryUrl(base: string, metric: string, from: number, to: number): string {
  return `${base}/v1/query?${new URLSearchParams({ metric, from: String(from), to: String(to), format: 'json' })}`;
}

async function counter(base: string, name: string): Promise<number> {
  const text = await (await expectOk(await fetch(`${base}/metrics`))).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

function expectUnavailable(t: Timed, component: string, reason: string, retryAfter: number): void {
  expect(t.status, t.text).toBe(503);
  expect(t.headers.get('retry-after')).toBe(String(retryAfter));
  const body = JSON.parse(t.text) as { error: { code: string; message: string; details: unknown } };
  expect(body.error.code).toBe('unavailable');
  expect(body.error.message).toContain(component);
  expect(body.error.details).toEqual({ component, reason, retryAfterSeconds: retryAfter });
}

/** Flush until nothing is left and no shard is busy. */
async function flushToEnd(base: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const r = (await (await expectOk(await post(`${base}/v1/admin/flush`, {}))).json()) as { objects: number; busyShards: number };
    if (r.objects === 0 && r.busyShards === 0) return;
    if (r.busyShards > 0) await sleep(200);
  }
  throw new Error('flush did not converge');
}

describe('faults of the real stores, under a whole S4 process', () => {
  let redis: PrivateRedis;
  let s3: PrivateS3;
  let s4: S4Process;
  const cold = new ExpectedStore();
  const hot = new ExpectedStore();
  // Two days back: closed windows that an admin flush moves to S3.
  const H0 = Math.floor((Date.now() - 2 * 86_400_000) / H) * H;
  const devices = Array.from({ length: 8 }, (_, i) => ({ id: `d${i}` }));
  const record = (model: ExpectedStore, samples: Sample[]) => {
    for (const s of samples) model.write(s.metric, s.tags, s.ts, s.fields);
  };
  const hotSamples = (round: number): Sample[] => {
    const now = Date.now();
    return devices.map((tags, i) => ({ metric: 'f.hot', tags, ts: now - 1_000 - i, fields: { value: round * 100 + i } }));
  };

  beforeAll(async () => {
    [redis, s3] = await Promise.all([PrivateRedis.start(), PrivateS3.start()]);
    const bucket = 's4-faults';
    const store = new S3ObjectStore({ bucket, prefix: '', region: PrivateS3.region, endpoint: s3.endpoint, forcePathStyle: true, maxSockets: 4 });
    await store.ensureBucket();
    await store.close();
    s4 = await S4Process.start({
      S4_DATA_DIR: tempDir('faults'),
      S4_NAMESPACE: uniqueNamespace(),
      S4_SHARDS: '4',
      S4_REDIS_URL: redis.url,
      S4_S3_BUCKET: bucket,
      S4_S3_ENDPOINT: s3.endpoint,
      S4_S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: PrivateS3.region,
      AWS_ACCESS_KEY_ID: PrivateS3.accessKey,
      AWS_SECRET_ACCESS_KEY: PrivateS3.secretKey,
      S4_S3_TIMEOUT_MS: String(S3_TIMEOUT_MS),
      S4_S3_HEDGE_AFTER_MS: String(HEDGE_AFTER_MS),
      S4_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      // The segment worker runs every 500 ms but leaves the current hour alone (2 h grace), so
      // hot-only data stays hot and any closed window written during a fault is flushed at once
      // (late data into a window flushed moments ago does not wait either).
      S4_FLUSH_INTERVAL_MS: '500',
      S4_FLUSH_GRACE_MS: String(2 * H),
      S4_FLUSH_LATE_MS: '0',
      S4_ROLLUP_INTERVAL_MS: '3600000',
    });
  });

  afterAll(async () => {
    s3?.thaw();
    redis?.thaw();
    await s4?.stop();
    await Promise.all([redis?.kill(), s3?.kill()]);
  });

  it('S3 frozen: readiness and cold reads answer 503 within the timeout, writes and hot reads go on, and everything converges after', async () => {
    const coldSamples: Sample[] = [];
    for (const tags of devices) for (let k = 0; k < 40; k++) coldSamples.push({ metric: 'f.cold', tags, ts: H0 + (k % 4) * H + k * 1_000, fields: { value: k } });
    expect((await write(s4.url, coldSamples)).status).toBe(204);
    record(cold, coldSamples);
    await flushToEnd(s4.url);

    const before = hotSamples(0);
    expect((await write(s4.url, before)).status).toBe(204);
    record(hot, before);
    const hotRange = () => ({ metric: 'f.hot', from: String(Date.now() - 30 * 60_000), to: String(Date.now() + 60_000) });
    // A running server has read the catalogs of its recent data; hot reads need nothing more from S3.
    expect(normalise(await queryAll(s4.url, hotRange(), 'json'))).toEqual(normalise(hot.expected()));
    const flushErrors = await counter(s4.url, 's4_flush_errors_total');

    s3.freeze();
    const frozenAt = performance.now();
    try {
      const ready = await timed(`${s4.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(3_000);
      expect(JSON.parse(ready.text)).toEqual({ status: 'not ready', checks: { hot: 'ok', objects: 'timeout' } });

      const coldQuery = await timed(queryUrl(s4.url, 'f.cold', H0, H0 + 4 * H));
      expectUnavailable(coldQuery, 'object store', 'timeout', 5);
      expect(coldQuery.ms).toBeLessThan(S3_TIMEOUT_MS + 1_000);

      const during = hotSamples(1);
      const late = devices.map((tags, i): Sample => ({ metric: 'f.cold', tags, ts: H0 + H + 999_000 + i, fields: { value: -1 - i } }));
      const writes = await Promise.all([write(s4.url, during), write(s4.url, late)]);
      for (const w of writes) {
        expect(w.status, w.text).toBe(204);
        expect(w.ms).toBeLessThan(1_000);
      }
      record(hot, during);
      record(cold, late);
      const lateAt = performance.now();

      expect(normalise(await queryAll(s4.url, hotRange(), 'json'))).toEqual(normalise(hot.expected()));

      // An admin flush may wait for the worker's pass on the same shard, then fails in its own budget.
      const flush = await timed(`${s4.url}/v1/admin/flush`, { method: 'POST' });
      expectUnavailable(flush, 'object store', 'timeout', 5);
      expect(flush.ms).toBeLessThan(2 * S3_TIMEOUT_MS + 1_500);

      // The late samples close no window of their own: the worker's next pass must flush them,
      // fail on the frozen S3 within its timeout, and count the failure instead of hanging.
      let counted = flushErrors;
      while (counted === flushErrors && performance.now() - lateAt < 3 * S3_TIMEOUT_MS + 1_000) {
        await sleep(100);
        counted = await counter(s4.url, 's4_flush_errors_total');
      }
      expect(counted).toBeGreaterThan(flushErrors);
      console.log(
        `S3 frozen: /readyz 503 in ${ready.ms.toFixed(0)} ms, cold query 503 in ${coldQuery.ms.toFixed(0)} ms, ` +
          `writes 204 in ${writes.map((w) => w.ms.toFixed(0)).join('/')} ms, admin flush 503 in ${flush.ms.toFixed(0)} ms, worker's flush failure counted ${(performance.now() - lateAt).toFixed(0)} ms after the late write ` +
          `(${(performance.now() - frozenAt).toFixed(0)} ms into the freeze)`,
      );
    } finally {
      s3.thaw();
    }

    const thawedAt = performance.now();
    let ready = await timed(`${s4.url}/readyz`);
    while (ready.status !== 200 && performance.now() - thawedAt < 10_000) {
      await sleep(100);
      ready = await timed(`${s4.url}/readyz`);
    }
    expect(ready.status).toBe(200);
    const readyMs = performance.now() - thawedAt;
    await flushToEnd(s4.url);
    expect(normalise(await queryAll(s4.url, { metric: 'f.cold', from: String(H0), to: String(H0 + 4 * H) }, 'json'))).toEqual(normalise(cold.expected()));
    expect(normalise(await queryAll(s4.url, hotRange(), 'json'))).toEqual(normalise(hot.expected()));
    console.log(`S3 thawed: ready again after ${readyMs.toFixed(0)} ms; ${cold.size + hot.size} acknowledged samples read back exactly once`);
  });

  it('Redis full: writes answer 503 "full" with Retry-After, and go through once memory is free', async () => {
    expect(await redis.command1('CONFIG', 'SET', 'maxmemory', '1')).toBe('+OK\r\n');
    let refused: Timed;
    try {
      refused = await write(s4.url, hotSamples(2));
    } finally {
      expect(await redis.command1('CONFIG', 'SET', 'maxmemory', '0')).toBe('+OK\r\n');
    }
    expectUnavailable(refused, 'hot tier', 'full', 30);
    expect(JSON.parse(refused.text).error.message).toMatch(/^hot tier full: /);
    const after = hotSamples(3);
    expect((await write(s4.url, after)).status).toBe(204);
    record(hot, after);
  });

  it('Redis killed for 3 s: 503 with Retry-After and no addresses, and back without restarting S4 once Redis is', async () => {
    const T = Date.now() - 5_000;
    const acked = devices.map((tags, i): Sample => ({ metric: 'f.kill', tags, ts: T + i, fields: { value: 1 } }));
    expect((await write(s4.url, acked)).status).toBe(204);
    const model = new ExpectedStore();
    record(model, acked);

    await redis.kill();
    const killedAt = performance.now();
    const leaks = ['ECONNREFUSED', '127.0.0.1', String(redis.port), 'Stream', 'ioredis'];

    // The same timestamps with another value: refused, so they must never show up later.
    const refused = await write(s4.url, acked.map((s) => ({ ...s, fields: { value: 2 } })));
    expectUnavailable(refused, 'hot tier', 'unavailable', 2);
    expect(refused.ms).toBeLessThan(REDIS_TIMEOUT_MS);
    for (const leak of leaks) expect(refused.text).not.toContain(leak);

    const ready = await timed(`${s4.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toEqual({ status: 'not ready', checks: { hot: 'unavailable', objects: 'ok' } });
    for (const leak of leaks) expect(ready.text).not.toContain(leak);

    const query = await timed(queryUrl(s4.url, 'f.kill', T - H, T + H));
    expectUnavailable(query, 'hot tier', 'unavailable', 2);
    expect((await timed(`${s4.url}/metrics`)).status).toBe(200);
    // The operator sees the cause in the server log: the reset of a command in flight, or the
    // refused reconnection.
    const cause = /hot tier connection failed.*(ECONNREFUSED|ECONNRESET)/;
    for (let i = 0; i < 40 && !cause.test(s4.output()); i++) await sleep(50);
    expect(s4.output()).toMatch(cause);

    // Down long enough for the client to back off to its 2 s cap: calls keep failing fast, and
    // the client never gives up reconnecting.
    const downFor = 3_000;
    while (performance.now() - killedAt < downFor) {
      const w = await write(s4.url, acked.map((s) => ({ ...s, fields: { value: 2 } })));
      expectUnavailable(w, 'hot tier', 'unavailable', 2);
      expect(w.ms).toBeLessThan(REDIS_TIMEOUT_MS);
      await sleep(250);
    }

    await redis.start();
    const restartedAt = performance.now();
    const again = devices.map((tags, i): Sample => ({ metric: 'f.kill', tags, ts: T + 1_000 + i, fields: { value: 3 } }));
    let w = await write(s4.url, again);
    while (w.status !== 204 && performance.now() - restartedAt < 10_000) {
      expect(w.status, w.text).toBe(503);
      await sleep(100);
      w = await write(s4.url, again);
    }
    expect(w.status, w.text).toBe(204);
    record(model, again);
    const backMs = performance.now() - restartedAt;

    expect(normalise(await queryAll(s4.url, { metric: 'f.kill', from: String(T - H), to: String(T + H) }, 'json'))).toEqual(normalise(model.expected()));
    // Everything acknowledged before the crash came back from the AOF.
    expect(normalise(await queryAll(s4.url, { metric: 'f.hot', from: String(Date.now() - 30 * 60_000), to: String(Date.now() + 60_000) }, 'json'))).toEqual(
      normalise(hot.expected()),
    );
    console.log(
      `Redis killed: write 503 in ${refused.ms.toFixed(0)} ms, /readyz 503 in ${ready.ms.toFixed(0)} ms; ` +
        `writes accepted again ${backMs.toFixed(0)} ms after the restart (${(performance.now() - killedAt).toFixed(0)} ms after the kill)`,
    );
  });
});

describe('S3 adapter: bounded, hedged calls against a real server', () => {
  let s3: PrivateS3;
  let proxy: StallingProxy;
  const bucket = 's4-hedge';
  const body = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7) & 255);
  const storeVia = (endpoint: string, timeoutMs: number, hedgeAfterMs: number) =>
    new S3ObjectStore({ bucket, prefix: '', region: PrivateS3.region, endpoint, forcePathStyle: true, maxSockets: 8, timeoutMs, hedgeAfterMs });

  beforeAll(async () => {
    s3 = await PrivateS3.start();
    const direct = storeVia(s3.endpoint, 5_000, 0);
    await direct.ensureBucket();
    await direct.put('obj', body);
    await direct.close();
    proxy = await StallingProxy.start(s3.port);
  });

  afterAll(async () => {
    await proxy?.close();
    await s3?.kill();
  });

  it('answers a read from the hedge when the first connection hangs, and aborts the loser', async () => {
    const store = storeVia(proxy.endpoint, 3_000, 200);
    try {
      proxy.swallow(1);
      const started = performance.now();
      const got = await store.get('obj');
      const ms = performance.now() - started;
      expect(got && !got.notModified && Buffer.from(got.body).equals(Buffer.from(body))).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(200);
      expect(ms).toBeLessThan(1_500);
      for (let i = 0; i < 20 && proxy.closedByClient < 1; i++) await sleep(50);
      expect(proxy.swallowed.length).toBe(1);
      expect(proxy.closedByClient).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('fails as unavailable (timeout) within its budget when every connection hangs', async () => {
    const store = storeVia(proxy.endpoint, 1_000, 0);
    try {
      proxy.swallow(10);
      const started = performance.now();
      const error = await store.get('obj').catch((e: unknown) => e);
      const ms = performance.now() - started;
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ component: 'object store', reason: 'timeout', status: 503 });
      expect(ms).toBeGreaterThanOrEqual(950);
      expect(ms).toBeLessThan(1_500);
    } finally {
      proxy.swallow(0);
      await store.close();
    }
  });

  it('fails as unavailable at once when nothing listens, and keeps 404 an answer', async () => {
    const dead = storeVia(`http://127.0.0.1:${await freePort()}`, 2_000, 0);
    try {
      const started = performance.now();
      await expect(dead.head('obj')).rejects.toMatchObject({ component: 'object store', reason: 'unavailable' });
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await dead.close();
    }
    const live = storeVia(proxy.endpoint, 2_000, 200);
    try {
      expect(await live.get('missing')).toBeNull();
      expect(await live.head('missing')).toBeNull();
    } finally {
      await live.close();
    }
  });
});

describe('Redis adapter: no call waits for a server that is not there', () => {
  it('fails appends as unavailable within its timeout and closes without hanging', async () => {
    const tier = new RedisHotTier(`redis://127.0.0.1:${await freePort()}`, { timeoutMs: 500, onConnectionError: () => undefined });
    const ref = { ns: uniqueNamespace(), shard: 0 };
    const started = performance.now();
    const error = await tier.append([{ ref, window: 0, id: 'x', key: { metric: 'm', tags: {} }, data: Uint8Array.of(1) }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ component: 'hot tier', reason: 'unavailable' });
    expect(performance.now() - started).toBeLessThan(1_000);
    // Once the first connection attempt is over, a call fails at once.
    const quick = performance.now();
    await expect(tier.generation(ref)).rejects.toBeInstanceOf(UnavailableError);
    expect(performance.now() - quick).toBeLessThan(100);
    await tier.close();
  });
});
