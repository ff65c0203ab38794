import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { seriesId, shardOf } from '@s4/core';
import { expectOk, normalise, post, queryAll } from '../support/client.js';
import { modeEnv } from '../support/modes.js';
import { ExpectedStore, rng } from '../support/model.js';
import { PrivateRedis } from '../support/private-servers.js';
import { S4Process, freePort } from '../support/s4-process.js';
import { tempDir, uniqueNamespace } from '../support/servers.js';

const run = promisify(execFile);
const KAFKA_SH = fileURLToPath(new URL('../../scripts/services/kafka.sh', import.meta.url));
const SHARDS = 8;
const H = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function brokers(): string {
  const b = process.env.S4_KAFKA_BROKERS;
  if (!b) throw new Error('S4_KAFKA_BROKERS is not set: run the tests with `npm test`, which starts Kafka');
  return b;
}

/** API and ingest processes on the real Redis and S3, ingesting through Kafka on a topic of their own. */
async function kafkaEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return modeEnv('redis+s3', {
    S4_SHARDS: String(SHARDS),
    S4_INGEST: 'kafka',
    S4_KAFKA_BROKERS: brokers(),
    S4_KAFKA_TOPIC_PREFIX: uniqueNamespace(),
    S4_KAFKA_REPLICATION: '1',
    S4_KAFKA_TIMEOUT_MS: '3000',
    S4_INGEST_LAG_INTERVAL_MS: '200',
    S4_INGEST_SESSION_TIMEOUT_MS: '2000',
    // Small batches: many commits, so kills land between an append and its commit.
    S4_INGEST_BATCH_BYTES: '4096',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    ...extra,
  });
}

interface Shards {
  ingest: string;
  readyLag: number;
  shards: { shard: number; lag: number | null; lagging: boolean }[];
}

async function shards(api: string): Promise<Shards> {
  return (await (await expectOk(await fetch(`${api}/v1/admin/shards`))).json()) as Shards;
}

/** Until every shard's lag is 0 (every acknowledged write is in the hot tier and committed). */
async function drained(api: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await shards(api);
    if (s.shards.every((x) => x.lag === 0)) return;
    if (Date.now() > deadline) throw new Error(`lag did not reach 0: ${JSON.stringify(s.shards)}`);
    await sleep(100);
  }
}

type Sample = { metric: string; tags: Record<string, string>; ts: number; fields: Record<string, number> };

function batchOf(random: () => number, metric: string, series: number, n: number, base: number, tag: number): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) {
    // Few timestamps per series, so later writes overwrite earlier ones (last write wins).
    const ts = base + Math.floor(random() * 4) * H + Math.floor(random() * 40) * 1000;
    out.push({ metric, tags: { id: `d${Math.floor(random() * series)}` }, ts, fields: { value: tag * 10_000 + i } });
  }
  return out;
}

/** Sends until the API acknowledges (202), retrying 503s as a client would; records what was acknowledged. */
async function writeAcked(api: string, samples: Sample[], model: ExpectedStore): Promise<{ unavailable: number }> {
  let unavailable = 0;
  for (;;) {
    const r = await post(`${api}/v1/write`, { samples });
    if (r.status === 202) break;
    if (r.status !== 503) throw new Error(`write answered ${r.status}: ${await r.text()}`);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    unavailable++;
    await sleep(200);
  }
  for (const s of samples) model.write(s.metric, s.tags, s.ts, s.fields);
  return { unavailable };
}

/** A counter of a process's /metrics (0 while it does not answer, e.g. restarting). */
async function metric(url: string, name: string): Promise<number> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text(), () => '');
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('Kafka ingest (S4_INGEST=kafka) on the real broker', () => {
  const procs: S4Process[] = [];
  const redis: PrivateRedis[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    for (const r of redis) await r.kill();
  });

  it('validates as direct ingest does: a bad request is refused whole and nothing reaches the log', async () => {
    const env = await kafkaEnv();
    const api = await S4Process.start({ ...env, S4_ROLE: 'api' });
    procs.push(api);
    await drained(api.url);
    const before = await shards(api.url);
    expect(before.ingest).toBe('kafka');
    const now = Date.now();
    const bad = await post(`${api.url}/v1/write`, { samples: [{ metric: 'k.m', tags: {}, ts: now, fields: { value: 1 } }, { metric: 'k.m', tags: {}, ts: 'soon', fields: { value: 2 } }] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    const after = await shards(api.url);
    expect(after.shards.map((s) => s.lag)).toEqual(before.shards.map((s) => s.lag));
    const ok = await post(`${api.url}/v1/write`, { samples: [{ metric: 'k.m', tags: {}, ts: now, fields: { value: 1 } }] });
    expect(ok.status).toBe(202);
    await api.stop();
  });

  it('reports lag per shard, warns queries about lagging shards, and an ingest worker is ready only once caught up', async () => {
    const hot = await PrivateRedis.start();
    redis.push(hot);
    const env = await kafkaEnv({ S4_REDIS_URL: hot.url, S4_REDIS_TIMEOUT_MS: '1000', S4_INGEST_READY_LAG: '2' });
    const api = await S4Process.start({ ...env, S4_ROLE: 'api' });
    procs.push(api);
    const random = rng(3);
    const model = new ExpectedStore();
    const base = Math.floor((Date.now() - 6 * H) / H) * H;
    // No ingest worker yet: every request adds one message to each shard it touches.
    const perShard = new Map<number, number>();
    for (let i = 0; i < 6; i++) {
      const samples = batchOf(random, 'lag.m', 3, 5, base, i);
      await writeAcked(api.url, samples, model);
      for (const shard of new Set(samples.map((s) => shardOf(seriesId(s), SHARDS)))) perShard.set(shard, (perShard.get(shard) ?? 0) + 1);
    }
    await sleep(500);
    const s = await shards(api.url);
    expect(s.shards.map((x) => x.lag)).toEqual(Array.from({ length: SHARDS }, (_, i) => perShard.get(i) ?? 0));
    const lagging = [...perShard].filter(([, n]) => n > 2).map(([shard]) => shard).sort((a, b) => a - b);
    expect(lagging.length).toBeGreaterThan(0);
    expect(s.shards.filter((x) => x.lagging).map((x) => x.shard)).toEqual(lagging);
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    for (const [shard, n] of perShard) expect(metrics).toContain(`s4_ingest_lag_messages{shard="${shard}"} ${n}`);

    // The query answers with what is in the hot tier (nothing yet) and names the lagging shards.
    const q = await fetch(`${api.url}/v1/query?metric=lag.m&from=${base}&to=${base + 5 * H}`);
    expect(q.status).toBe(200);
    expect(q.headers.get('s4-lagging-shards')).toBe(lagging.join(','));
    const body = (await q.json()) as { series: unknown[]; warnings: { code: string; shards: number[] }[] };
    expect(body.series).toEqual([]);
    expect(body.warnings).toEqual([expect.objectContaining({ code: 'ingest_lag', shards: lagging })]);

    // A worker whose hot tier hangs cannot write: it joins, owns every shard, and is not ready.
    hot.freeze();
    const worker = await S4Process.start({ ...env, S4_ROLE: 'ingest' }, '/healthz');
    procs.push(worker);
    let ready: { status: number; body: { checks: Record<string, string>; ingest?: { ready: boolean; shards?: number[] } } } | null = null;
    for (let i = 0; i < 100; i++) {
      const r = await fetch(`${worker.url}/readyz`);
      ready = { status: r.status, body: (await r.json()) as never };
      if (ready.body.ingest?.shards?.length === SHARDS && ready.body.checks.ingest === 'lagging') break;
      await sleep(100);
    }
    expect(ready!.status).toBe(503);
    expect(ready!.body.checks.ingest).toBe('lagging');
    expect(ready!.body.ingest!.shards).toEqual(Array.from({ length: SHARDS }, (_, i) => i));

    // The hot tier back: the worker catches up, commits, and is ready; the warning is gone.
    hot.thaw();
    await drained(api.url);
    for (let i = 0; i < 100 && (await fetch(`${worker.url}/readyz`)).status !== 200; i++) await sleep(100);
    expect((await fetch(`${worker.url}/readyz`)).status).toBe(200);
    const after = await fetch(`${api.url}/v1/query?metric=lag.m&from=${base}&to=${base + 5 * H}&format=json`);
    expect(after.headers.get('s4-lagging-shards')).toBeNull();
    expect(((await after.json()) as { warnings?: unknown }).warnings).toBeUndefined();
    expect(normalise(await queryAll(api.url, { metric: 'lag.m', from: String(base), to: String(base + 5 * H) }, 'msgpack'))).toEqual(normalise(model.expected()));
    expect(await metric(worker.url, 's4_ingest_consumed_batches_total')).toBeGreaterThan(0);
    await worker.stop();
    await api.stop();
  });

  it('stores every acknowledged sample exactly once across 20 kills of ingest workers at random points', async () => {
    const TRIALS = 20;
    // Short sessions: the group drops a killed worker after 1 s (Kafka's floor here, see kafka.sh).
    const env = await kafkaEnv({ S4_INGEST_SESSION_TIMEOUT_MS: '1000' });
    const api = await S4Process.start({ ...env, S4_ROLE: 'api' });
    procs.push(api);
    const workers = await Promise.all([0, 1, 2].map(() => S4Process.start({ ...env, S4_ROLE: 'ingest' })));
    procs.push(...workers);
    const restarting = new Map<S4Process, Promise<void>>();
    const random = rng(11);
    const model = new ExpectedStore();
    const base = Math.floor((Date.now() - 6 * H) / H) * H;
    let tag = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      if (restarting.size === workers.length) await Promise.race(restarting.values());
      const live = workers.filter((w) => !restarting.has(w));
      const victim = live[Math.floor(random() * live.length)]!;
      const before = await metric(victim.url, 's4_ingest_consumed_batches_total');
      let writing = true;
      const writes = (async () => {
        while (writing) await writeAcked(api.url, batchOf(random, 'kill.m', 24, 120, base, tag++), model);
      })();
      // The kill lands while the victim is consuming (it wrote a batch during this trial, and
      // writes keep coming), a random moment later: before, during or after an append or a commit.
      const deadline = Date.now() + 60_000;
      while ((await metric(victim.url, 's4_ingest_consumed_batches_total')) === before) {
        if (Date.now() > deadline) throw new Error(`the worker never consumed:\n${victim.output()}`);
        await sleep(20);
      }
      await sleep(Math.floor(random() * 100));
      await victim.kill();
      writing = false;
      await writes;
      // Back at once, in the background: it rejoins and resumes from the committed offsets while
      // the next trial kills another worker.
      const back = victim.start('/healthz').then(() => void restarting.delete(victim));
      restarting.set(victim, back);
    }
    await Promise.all(restarting.values());
    await drained(api.url);
    const range = { metric: 'kill.m', from: String(base), to: String(base + 5 * H) };
    expect(normalise(await queryAll(api.url, range, 'msgpack'))).toEqual(normalise(model.expected()));
    // And after the hot tier is flushed to segments, still once each.
    await expectOk(await post(`${api.url}/v1/admin/flush`, {}));
    expect(normalise(await queryAll(api.url, range, 'msgpack'))).toEqual(normalise(model.expected()));
    await Promise.all([...workers, api].map((p) => p.stop()));
  });

  it('loses nothing when its broker is killed and restarted mid-stream (a private broker)', async () => {
    const port = await freePort();
    const cport = await freePort();
    const dir = tempDir('kafka');
    const kenv = { ...process.env, S4_KAFKA_PORT: String(port), S4_KAFKA_CONTROLLER_PORT: String(cport), S4_KAFKA_DIR: dir };
    await run(KAFKA_SH, ['start'], { env: kenv });
    try {
      const env = await kafkaEnv({ S4_KAFKA_BROKERS: `127.0.0.1:${port}`, S4_ROLE: 'all', S4_REDIS_URL: '', S4_S3_BUCKET: '' });
      const s4 = await S4Process.start(env);
      procs.push(s4);
      const random = rng(5);
      const model = new ExpectedStore();
      const base = Math.floor((Date.now() - 6 * H) / H) * H;
      for (let i = 0; i < 10; i++) await writeAcked(s4.url, batchOf(random, 'broker.m', 10, 100, base, i), model);
      // A crash of the broker (SIGKILL, no controlled shutdown): writes answer 503 with Retry-After.
      process.kill(Number(readFileSync(join(dir, 'kafka.pid'), 'utf8')), 'SIGKILL');
      const down = await post(`${s4.url}/v1/write`, { samples: batchOf(random, 'broker.m', 10, 5, base, 99) });
      expect(down.status).toBe(503);
      expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
      // Writers keep going (retrying 503s) while the broker restarts.
      const writer = (async () => {
        let unavailable = 0;
        for (let i = 0; i < 20; i++) unavailable += (await writeAcked(s4.url, batchOf(random, 'broker.m', 10, 100, base, 100 + i), model)).unavailable;
        return unavailable;
      })();
      await sleep(500);
      await run(KAFKA_SH, ['start'], { env: kenv });
      await writer;
      await drained(s4.url);
      expect(normalise(await queryAll(s4.url, { metric: 'broker.m', from: String(base), to: String(base + 5 * H) }, 'msgpack'))).toEqual(normalise(model.expected()));
      await s4.stop();
    } finally {
      await run(KAFKA_SH, ['stop'], { env: kenv }).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
