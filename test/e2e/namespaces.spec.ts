import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOk, post, queryAll } from '../support/client.js';
import { MODES, modeEnv } from '../support/modes.js';
import { ExpectedStore } from '../support/model.js';
import { S4Process } from '../support/s4-process.js';
import { FilesystemObjectStore, S3ObjectStore } from '@s4/storage';
import { s3Env, tempDir, uniqueNamespace } from '../support/servers.js';

const MIN = 60_000;

interface Top {
  namespaces: { namespace: string; activeSeries: number; samplesHour: number; samplesDay: number }[];
  metrics: { namespace: string; metric: string; activeSeries: number; samplesHour: number; samplesDay: number }[];
}

// Redis keeps series counters per namespace name: every run has its own names.
const run = uniqueNamespace().slice(0, 8);
const INFRA = `infra-${run}`;
const IOT = `iot-${run}`;
const FALLBACK = `fallback-${run}`;

function policy(maxActiveSeries: number, extra: Record<string, unknown> = {}) {
  return {
    namespaces: [
      { name: INFRA, prefixes: ['cpu.', 'cpu.load.'], shards: 4, rawRetention: '30d', backfill: '2d', limits: { maxActiveSeries } },
      { name: IOT, prefixes: ['cpu.load.edge'], shards: 2, limits: { maxFields: 2 } },
      { name: FALLBACK, shards: 3 },
    ],
    defaultNamespace: FALLBACK,
    ...extra,
  };
}

/** Replace the file as editors and config managers do: write aside, rename over. */
function writePolicy(file: string, body: unknown): void {
  writeFileSync(`${file}.tmp`, typeof body === 'string' ? body : JSON.stringify(body));
  renameSync(`${file}.tmp`, file);
}

const samplesOf = (metric: string, from: number, to: number, ts: number) => Array.from({ length: to - from }, (_, i) => ({ metric, tags: { host: `h${from + i}` }, ts, fields: { value: from + i } }));

async function until(check: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(MODES)('namespaces in the server, %s', (mode) => {
  const started: S4Process[] = [];
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()));
  });

  it('routes by longest prefix, enforces the series limit with 429, reports top and cardinality, reloads without losing writes', async () => {
    const dir = tempDir('ns');
    const file = join(dir, 'namespaces.json');
    writePolicy(file, policy(1000));
    const env = await modeEnv(mode, { S4_NAMESPACES_FILE: file, S4_SHARDS: '3', S4_NAMESPACE: FALLBACK });
    const s4 = await S4Process.start(env);
    started.push(s4);
    const url = s4.url;
    const now = Date.now();

    const ns = (await (await expectOk(await fetch(`${url}/v1/namespaces`))).json()) as { defaultNamespace: string; namespaces: { name: string; shards: number; rawRetentionMs: number | null }[] };
    expect(ns.defaultNamespace).toBe(FALLBACK);
    expect(ns.namespaces.map((n) => [n.name, n.shards, n.rawRetentionMs])).toEqual([
      [INFRA, 4, 30 * 86_400_000],
      [IOT, 2, null],
      [FALLBACK, 3, null],
    ]);

    // The first 1,000 series of the namespace are accepted, the 1,001st is refused with 429 naming limit, namespace and metric.
    await expectOk(await post(`${url}/v1/write`, { samples: samplesOf('cpu.load', 0, 600, now) }));
    await expectOk(await post(`${url}/v1/write`, { samples: samplesOf('cpu.user', 600, 1000, now) }));
    const refused = await post(`${url}/v1/write`, { samples: [...samplesOf('cpu.load', 0, 10, now + 1), ...samplesOf('cpu.load', 1000, 1001, now + 1)] });
    expect(refused.status).toBe(429);
    const err = ((await refused.json()) as { error: { code: string; message: string; details: { limit: string; max: number } } }).error;
    expect(err.details).toMatchObject({ limit: 'maxActiveSeries', max: 1000 });
    expect(err.message).toContain(`namespace ${INFRA}`);
    expect(err.message).toContain('"cpu.load"');
    // Existing series keep writing; other namespaces are not affected.
    await expectOk(await post(`${url}/v1/write`, { samples: samplesOf('cpu.load', 0, 600, now + 2) }));
    await expectOk(await post(`${url}/v1/write`, { samples: samplesOf('cpu.load.edge', 0, 5, now) }));
    await expectOk(await post(`${url}/v1/write`, { samples: samplesOf('mem.free', 0, 7, now) }));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/s4_limit_refused_total\{namespace="infra-[a-z0-9]+",limit="maxActiveSeries"\} 1/);

    // Per-namespace limits: iot allows 2 fields; infra's backfill window is 2 days.
    const wide = await post(`${url}/v1/write`, { samples: [{ metric: 'cpu.load.edge1', ts: now, fields: { a: 1, b: 2, c: 3 } }] });
    expect(wide.status).toBe(400);
    expect(await wide.text()).toContain('maxFields');
    const old = await post(`${url}/v1/write`, { samples: [{ metric: 'cpu.load', tags: { host: 'h1' }, ts: now - 3 * 86_400_000, fields: { value: 1 } }] });
    expect(old.status).toBe(400);
    expect(await old.text()).toContain('backfill');

    // Top matches a brute-force count of what was written.
    const top = (await (await expectOk(await fetch(`${url}/v1/admin/top?by=series&limit=10`))).json()) as Top;
    expect(top.metrics.map((m) => [m.namespace, m.metric, m.activeSeries, m.samplesHour])).toEqual([
      [INFRA, 'cpu.load', 600, 1200],
      [INFRA, 'cpu.user', 400, 400],
      [FALLBACK, 'mem.free', 7, 7],
      [IOT, 'cpu.load.edge', 5, 5],
    ]);
    expect(top.namespaces.find((n) => n.namespace === INFRA)).toMatchObject({ activeSeries: 1000, samplesHour: 1600, samplesDay: 1600 });
    const bySamples = (await (await expectOk(await fetch(`${url}/v1/admin/top?by=samples&limit=1`))).json()) as Top;
    expect(bySamples.metrics.map((m) => m.metric)).toEqual(['cpu.load']);

    const card = (await (await expectOk(await fetch(`${url}/v1/admin/cardinality?metric=cpu.load&limit=2`))).json()) as { namespace: string; series: number; tags: { key: string; values: number; top: unknown[] }[] };
    expect(card.namespace).toBe(INFRA);
    expect(card.series).toBe(600);
    expect(card.tags).toEqual([{ key: 'host', values: 600, top: [{ value: 'h0', series: 1 }, { value: 'h1', series: 1 }] }]);

    // Queries and series listing find each namespace's data, hot and flushed.
    // Two hours back (within infra's backfill window): a closed window the flush turns into parts.
    await expectOk(await post(`${url}/v1/write`, { samples: samplesOf('cpu.load', 0, 50, now - 2 * 3_600_000) }));
    await expectOk(await post(`${url}/v1/admin/flush`, {}));
    const edge = await queryAll(url, { metric: 'cpu.load.edge', from: String(now - MIN), to: String(now + MIN) }, 'json');
    expect(edge.size).toBe(5);
    const load = await queryAll(url, { metric: 'cpu.load', from: String(now - MIN), to: String(now + MIN) }, 'msgpack');
    expect(load.size).toBe(600);
    expect([...load.values()].every((s) => s.ts.length === 2)).toBe(true);
    const listed = (await (await expectOk(await fetch(`${url}/v1/series?from=${now - MIN}&to=${now + MIN}`))).json()) as { series: unknown[] };
    expect(listed.series.length).toBe(1000 + 5 + 7);

    // Cost report: the namespace's objects as a LIST sees them, the requests that made them, list-price dollars.
    const store =
      mode === 'embedded'
        ? new FilesystemObjectStore(`${env.S4_DATA_DIR}/objects`)
        : new S3ObjectStore({ bucket: env.S4_S3_BUCKET!, prefix: '', region: s3Env().region, endpoint: s3Env().endpoint, forcePathStyle: true, maxSockets: 4 });
    let bytes = 0;
    let count = 0;
    let parts = 0;
    for await (const o of store.list(`v1/${INFRA}/`)) {
      bytes += o.size;
      count++;
      if (o.key.endsWith('.s4seg')) parts++;
    }
    await store.close();
    const usage = (await (await expectOk(await fetch(`${url}/v1/admin/usage?namespace=${INFRA}`))).json()) as {
      prices: { storageGbMonth: number; putPer1000: number; getPer1000: number };
      namespaces: { namespace: string; objects: { bytes: number; count: number }; requestsLastDay: { put: number; get: number }; dollars: { storagePerMonth: number; requestsLastDay: number } }[];
    };
    expect(usage.prices).toEqual({ storageGbMonth: 0.023, putPer1000: 0.005, getPer1000: 0.0004 });
    const u = usage.namespaces[0]!;
    expect(u.objects).toMatchObject({ bytes, count });
    expect(parts).toBeGreaterThan(0);
    // Every part and catalog was PUT (and the manifest, day lists): at least one PUT per object; queries read with GETs.
    expect(u.requestsLastDay.put).toBeGreaterThanOrEqual(count);
    expect(u.requestsLastDay.get).toBeGreaterThan(0);
    expect(u.dollars.storagePerMonth).toBeCloseTo((bytes / 2 ** 30) * 0.023, 6);
    expect(u.dollars.requestsLastDay).toBeCloseTo((u.requestsLastDay.put / 1000) * 0.005 + (u.requestsLastDay.get / 1000) * 0.0004, 6);
    expect((await fetch(`${url}/v1/admin/usage?namespace=nope`)).status).toBe(404);

    // A bad edit is refused with a log line naming the problem; the policies in force stay.
    writePolicy(file, policy(1000, { namespaces: [{ name: INFRA, prefixes: ['cpu.'], rawRetention: 'a month' }] }));
    await until(async () => s4.output().includes('"a month" is not a retention'));
    writePolicy(file, { ...policy(1000), namespaces: policy(1000).namespaces.map((n) => (n.name === IOT ? { ...n, shards: 5 } : n)) });
    await until(async () => s4.output().includes(`namespace ${IOT}: shards 2 -> 5 refused`));
    expect(((await (await fetch(`${url}/v1/namespaces`)).json()) as typeof ns).namespaces.map((n) => n.shards)).toEqual([4, 2, 3]);

    // Hot reload under load: writers keep writing while the limit is raised; every acknowledged sample is kept.
    let stop = false;
    const acknowledged: { host: string; ts: number }[] = [];
    const writer = (async () => {
      for (let round = 0; !stop; round++) {
        const ts = now + 10 + round;
        const r = await post(`${url}/v1/write`, { samples: samplesOf('cpu.load', 0, 50, ts) });
        if (r.status === 204) for (let i = 0; i < 50; i++) acknowledged.push({ host: `h${i}`, ts });
        else throw new Error(`write during reload: ${r.status} ${await r.text()}`);
      }
    })();
    writePolicy(file, policy(2000));
    // The new limit applies as soon as the poll sees the file (about 250 ms).
    await until(async () => (await post(`${url}/v1/write`, { samples: samplesOf('cpu.load', 1000, 1001, now) })).status === 204);
    stop = true;
    await writer;
    expect(acknowledged.length).toBeGreaterThan(0);
    const after = await queryAll(url, { metric: 'cpu.load', from: String(now + 10), to: String(now + 10 + acknowledged.length) }, 'msgpack');
    for (const a of acknowledged) expect(after.get(ExpectedStore.key('cpu.load', { host: a.host }))?.ts).toContain(a.ts);
    const inForce = (await (await fetch(`${url}/v1/namespaces`)).json()) as { namespaces: { limits: { maxActiveSeries: number | null } }[] };
    expect(inForce.namespaces[0]!.limits.maxActiveSeries).toBe(2000);
  });

  if (mode === 'redis+s3')
    it('holds the series limit across two API processes sharing Redis', async () => {
      const dir = tempDir('ns2');
      const file = join(dir, 'namespaces.yaml');
      const shared = uniqueNamespace();
      writePolicy(file, `namespaces:\n  - name: ${shared}\n    prefixes: [app.]\n    limits: { maxActiveSeries: 100 }\n  - name: rest\n`);
      const env = await modeEnv(mode, { S4_NAMESPACES_FILE: file, S4_NAMESPACE: 'rest', S4_ROLE: 'api' });
      const a = await S4Process.start(env);
      started.push(a);
      const b = await S4Process.start(env);
      started.push(b);
      const now = Date.now();
      const tag = 'x';
      const of = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ metric: 'app.req', tags: { run: tag, n: String(from + i) }, ts: now, fields: { value: 1 } }));
      const room = 100;
      const half = Math.floor(room / 2);
      await expectOk(await post(`${a.url}/v1/write`, { samples: of(0, half) }));
      await expectOk(await post(`${b.url}/v1/write`, { samples: of(half, room) }));
      expect((await post(`${a.url}/v1/write`, { samples: of(room, room + 1) })).status).toBe(429);
      expect((await post(`${b.url}/v1/write`, { samples: of(room, room + 1) })).status).toBe(429);
      await expectOk(await post(`${b.url}/v1/write`, { samples: of(0, room) }));
    });
});
