import { readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSegmentKey } from '@s4/core';
import { expectOk, post } from '../support/client.js';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 0, 5);
/** Names that are properties of every plain JS object: each must be an ordinary field or tag name. */
const NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty'];

interface Answer {
  series: { metric: string; tags: Record<string, string>; ts: number[]; fields: Record<string, unknown[]> }[];
}

async function query(url: string, qs: string): Promise<Answer> {
  return (await (await expectOk(await fetch(`${url}/v1/query?${qs}`))).json()) as Answer;
}

describe('hostile names and failing reads never take the server down', () => {
  let s4: S4Process | undefined;
  afterAll(async () => {
    await s4?.stop();
  });

  it('stores fields and tags named like Object.prototype members in every body form, before and after flush and restart', async () => {
    const env = await modeEnv('embedded');
    s4 = await S4Process.start(env);
    const url = s4.url;
    const fields = Object.fromEntries(NAMES.map((n, i) => [n, i + 0.5]));
    await expectOk(await post(`${url}/v1/write`, { samples: [{ metric: 'hostile', tags: { constructor: 'a' }, ts: H0, fields }] }));
    await expectOk(await post(`${url}/v1/write`, { series: [{ metric: 'hostile', tags: { constructor: 'a' }, ts: [H0 + 1000], fields: { toString: [7], valueOf: ['s'] } }] }));
    await expectOk(await post(`${url}/v1/write`, `${JSON.stringify({ metric: 'hostile', tags: { constructor: 'a' }, ts: H0 + 2000, fields: { hasOwnProperty: true } })}\n`, 'application/x-ndjson'));
    await expectOk(await post(`${url}/v1/write`, { series: [{ metric: 'hostile', tags: { constructor: 'a' }, ts: Float64Array.of(H0 + 3000), fields: { constructor: Float64Array.of(9) } }] }, 'application/msgpack'));

    const expected = {
      constructor: [0.5, null, null, 9],
      toString: [1.5, 7, null, null],
      valueOf: [2.5, 's', null, null],
      hasOwnProperty: [3.5, null, true, null],
    };
    const check = async (when: string) => {
      const a = await query(url, `metric=hostile&tag=constructor:a&from=${H0}&to=${H0 + H}`);
      expect(a.series, when).toHaveLength(1);
      expect(a.series[0]!.ts, when).toEqual([H0, H0 + 1000, H0 + 2000, H0 + 3000]);
      expect(a.series[0]!.fields, when).toEqual(expected);
      const projected = await query(url, `metric=hostile&from=${H0}&to=${H0 + H}&fields=toString`);
      expect(projected.series[0]!.fields, when).toEqual({ toString: expected.toString });
      const grouped = await query(url, `metric=hostile&from=${H0}&to=${H0 + H}&step=1h&agg=count&groupBy=constructor`);
      expect(grouped.series[0]!.tags, when).toEqual({ constructor: 'a' });
      expect(grouped.series[0]!.fields['count(constructor)'], when).toEqual([2]);
      const latest = (await (await expectOk(await fetch(`${url}/v1/latest?metric=hostile&from=${H0}&to=${H0 + H}`))).json()) as Answer;
      expect(latest.series[0]!.ts, when).toEqual([H0 + 3000]);
    };
    await check('hot');
    const flushed = (await (await expectOk(await post(`${url}/v1/admin/flush`, {}))).json()) as { objects: number };
    expect(flushed.objects).toBeGreaterThan(0);
    await check('after flush');
    await expectOk(await post(`${url}/v1/admin/rollup`, {}));
    await check('after rollup');
    await s4.stop();
    await s4.start();
    await check('after restart');
    // A flush after the restart must still work (the old bug made every later flush of the shard fail).
    await expectOk(await post(`${url}/v1/write`, { samples: [{ metric: 'hostile', ts: H0 + 2 * H, fields: { toString: 1 } }] }));
    await expectOk(await post(`${url}/v1/admin/flush`, {}));

    // Reads that fail in several shards at once answer an error and leave the process up.
    const samples = Array.from({ length: 64 }, (_, i) => ({ metric: 'spread', tags: { i: String(i) }, ts: H0, fields: { value: i } }));
    await expectOk(await post(`${url}/v1/write`, { samples }));
    await expectOk(await post(`${url}/v1/admin/flush`, {}));
    removeSegments(join(env.S4_DATA_DIR!, 'objects'));
    for (let attempt = 0; attempt < 3; attempt++) {
      for (const format of ['json', 'msgpack', 'ndjson']) {
        const r = await fetch(`${url}/v1/query?metric=spread&from=${H0}&to=${H0 + H}&format=${format}`).catch((e: Error) => e);
        if (!(r instanceof Error)) {
          await r.arrayBuffer().catch(() => undefined);
          if (format === 'json') expect(r.status).toBeGreaterThanOrEqual(500);
        }
      }
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    }
    expect(s4.output()).not.toMatch(/unhandled|UnhandledPromiseRejection/i);
  });

  it('cuts off a request whose body trickles in slower than the request timeout', async () => {
    const env = await modeEnv('embedded', { S4_REQUEST_TIMEOUT_MS: '1000' });
    const slow = await S4Process.start(env);
    try {
      const started = Date.now();
      const closed = await new Promise<string>((resolve) => {
        const socket = connect(slow.port, '127.0.0.1', () => {
          socket.write('POST /v1/write HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"samples":[');
          const tick = setInterval(() => socket.write(' '), 200);
          let got = '';
          socket.on('data', (d: Buffer) => (got += d.toString()));
          socket.on('close', () => {
            clearInterval(tick);
            resolve(got);
          });
          socket.on('error', () => undefined);
        });
      });
      const took = Date.now() - started;
      expect(took).toBeLessThan(10_000);
      expect(closed === '' || /^HTTP\/1\.1 408/.test(closed)).toBe(true);
      expect((await fetch(`${slow.url}/healthz`)).status).toBe(200);
    } finally {
      await slow.stop();
    }
  });
});

/** Delete every segment part object (catalogs stay): the catalog then names objects that are gone. */
function removeSegments(dir: string): void {
  const keys = (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .filter((k) => parseSegmentKey(k) !== null);
  if (keys.length === 0) throw new Error(`no segment objects found under ${dir}`);
  for (const k of keys) rmSync(join(dir, k));
}
