import { afterAll, describe, expect, it } from 'vitest';
import { expectOk, normalise, post, queryAll } from '../support/client.js';
import { MODES, modeEnv } from '../support/modes.js';
import { ExpectedStore, rng } from '../support/model.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 1, 1, 0);
const ROUNDS = 20;
const SERIES = Array.from({ length: 24 }, (_, i) => ({ metric: 'crash.m', tags: { id: `d${i}` } }));

/** Flush until nothing is left and no shard is busy (a killed owner's lease must expire first). */
async function flushToEnd(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = (await (await expectOk(await post(`${url}/v1/admin/flush`, {}))).json()) as { objects: number; busyShards: number };
    if (r.objects === 0 && r.busyShards === 0) return;
    if (r.busyShards > 0) await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error('flush did not converge');
}

describe.each(MODES)('crash safety: SIGKILL during flush, %s', (mode) => {
  let s4: S4Process | undefined;
  afterAll(async () => {
    await s4?.stop();
  });

  it(`returns every acknowledged sample exactly once after ${ROUNDS} kills at random points of a flush`, async () => {
    const random = rng(7);
    const model = new ExpectedStore();
    s4 = await S4Process.start(await modeEnv(mode, { S4_LEASE_TTL_MS: '1000' }));
    let killedDuringFlush = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Acknowledged writes: new hours plus overwrites of hours that earlier rounds flushed.
      const samples = [];
      for (const s of SERIES)
        for (let k = 0; k < 400; k++) {
          const ts = H0 + Math.floor(random() * 12) * H + Math.floor(random() * 3600) * 1000;
          samples.push({ ...s, ts, fields: { value: round * 1000 + k, round } });
        }
      await expectOk(await post(`${s4.url}/v1/write`, { samples }));
      for (const x of samples) model.write(x.metric, x.tags, x.ts, x.fields);

      const flush = fetch(`${s4.url}/v1/admin/flush`, { method: 'POST' }).then(
        (r) => r.status,
        () => 'killed' as const,
      );
      await new Promise((res) => setTimeout(res, Math.floor(random() * 600)));
      await s4.kill();
      if ((await flush) === 'killed') killedDuringFlush++;
      await s4.start();
    }
    expect(killedDuringFlush).toBeGreaterThan(ROUNDS / 4);

    const range = { metric: 'crash.m', from: String(H0), to: String(H0 + 12 * H) };
    expect(normalise(await queryAll(s4.url, range, 'msgpack'))).toEqual(normalise(model.expected()));
    await flushToEnd(s4.url);
    expect(normalise(await queryAll(s4.url, range, 'msgpack'))).toEqual(normalise(model.expected()));
  });
});
