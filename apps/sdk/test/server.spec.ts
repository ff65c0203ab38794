// Integration tests against the real S4 server in embedded mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S4Client, S4HttpError, type Sample } from '../src/index.js';
import { removeDir, startEmbedded, type Embedded } from './embedded.js';

const HOUR = 3_600_000;
const base = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;

describe('SDK against an embedded S4', { timeout: 60_000 }, () => {
  let server: Embedded;
  let client: S4Client;
  beforeAll(async () => {
    server = await startEmbedded();
    client = new S4Client({ url: server.url });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    if (server !== undefined) removeDir(server.dataDir);
  }, 60_000);

  it('writes and reads back typed columns', async () => {
    const samples: Sample[] = Array.from({ length: 500 }, (_, i) => ({
      metric: 'sdk.env',
      tags: { room: i % 2 === 0 ? 'a' : 'b' },
      ts: base + i * 1000,
      fields: i % 10 === 0 ? { temp: i / 4, label: `n${i}`, nested: { k: [i] } } : { temp: i / 4 },
    }));
    await client.write(samples);
    const result = await client.query({ metric: 'sdk.env', tags: { room: 'a' }, from: base, to: base + HOUR });
    expect(result.series).toHaveLength(1);
    const s = result.series[0];
    expect(s?.tags).toEqual({ room: 'a' });
    expect(s?.ts).toBeInstanceOf(Float64Array);
    expect(Array.from(s?.ts ?? [])).toEqual(samples.filter((_, i) => i % 2 === 0).map((x) => x.ts));
    expect(s?.fields.temp).toBeInstanceOf(Float64Array);
    expect(s?.fields.label?.[0]).toBe('n0');
    expect(s?.fields.label?.[1]).toBeNull();
    expect(s?.fields.nested?.[0]).toEqual({ k: [0] });
    expect(await client.series({ metric: 'sdk.env', from: base, to: base + HOUR })).toHaveLength(2);
  });

  it('query() joins a long series that arrives in several chunks', async () => {
    const n = 100_000;
    const batch: Sample[] = [];
    for (let i = 0; i < n; i++) batch.push({ metric: 'sdk.long', ts: base + i * 10, fields: { value: i } });
    const writer = client.writer({ maxBatch: 10_000 });
    await writer.write(batch);
    await writer.close();
    const result = await client.query({ metric: 'sdk.long', from: base, to: base + n * 10 });
    expect(result.points).toBe(n);
    const v = result.series[0]?.fields.value as Float64Array;
    expect(v).toBeInstanceOf(Float64Array);
    expect(v[n - 1]).toBe(n - 1);
  });

  it('raises S4HttpError with the server code for an invalid query', async () => {
    const error = (await client.query({ metric: 'sdk.env', from: 10, to: 5 }).catch((e: unknown) => e)) as S4HttpError;
    expect(error).toBeInstanceOf(S4HttpError);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
  });

  it('flush() moves data to object storage and reads still see it', async () => {
    const r = await client.flush();
    expect(typeof r.objects).toBe('number');
    const result = await client.query({ metric: 'sdk.env', from: base, to: base + HOUR });
    expect(result.points).toBe(500);
  });

  it('latest() returns the newest sample of each series, flushed or hot', async () => {
    const all = await client.query({ metric: 'sdk.env', from: base, to: base + HOUR });
    const latest = await client.latest({ metric: 'sdk.env', from: base, to: base + HOUR });
    expect(latest.series).toHaveLength(all.series.length);
    expect(latest.points).toBe(all.series.length);
    for (const s of latest.series) {
      const full = all.series.find((x) => JSON.stringify(x.tags) === JSON.stringify(s.tags))!;
      expect(s.ts[0]).toBe(full.ts[full.ts.length - 1]);
    }
  });
});

describe('the batching writer across a server restart', () => {
  it('loses and duplicates nothing (checked by a full export)', async () => {
    let server = await startEmbedded();
    const { port, dataDir } = server;
    try {
      const client = new S4Client({ url: server.url, retry: { retries: 30, minDelayMs: 20, maxDelayMs: 500 } });
      const writer = client.writer({ maxBatch: 500, concurrency: 4, flushMs: 10 });
      const n = 30_000;
      let restart: Promise<void> | undefined;
      for (let i = 0; i < n; i++) {
        if (i === 12_000) {
          const old = server;
          restart = (async () => {
            await old.close();
            await new Promise((resolve) => setTimeout(resolve, 300));
            server = await startEmbedded({ port, dataDir });
          })();
        }
        await writer.write({ metric: 'restart.m', tags: { dev: `d${i % 7}` }, ts: base + i, fields: { value: i } });
      }
      await restart;
      await writer.close();
      expect(writer.stats().acknowledged).toBe(n);
      expect(writer.stats().retries).toBeGreaterThan(0);

      let text = '';
      for await (const bytes of client.export({ metric: 'restart.m', from: base, to: base + n, format: 'ndjson' })) text += Buffer.from(bytes).toString('utf8');
      const lines = text.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(n);
      const seen = new Set<number>();
      for (const line of lines) {
        const s = JSON.parse(line) as Sample;
        expect(s.fields.value).toBe(s.ts - base);
        expect(s.tags).toEqual({ dev: `d${(s.ts - base) % 7}` });
        seen.add(s.ts);
      }
      expect(seen.size).toBe(n);
    } finally {
      await server.close();
      removeDir(dataDir);
    }
  }, 120_000);
});
