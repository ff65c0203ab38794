import { afterAll, describe, expect, it } from 'vitest';
import { expectOk, normalise, post, queryAll } from '../support/client.js';
import { MODES, modeEnv } from '../support/modes.js';
import { ExpectedStore, rng } from '../support/model.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;
// Recent closed hours: the compactor looks back S4_COMPACT_LOOKBACK_MS (7 days) from now.
const H0 = Math.floor(Date.now() / H) * H - 3 * H;

interface CompactResult {
  windows: number;
  partsIn: number;
  bytesIn: number;
  bytesOut: number;
  deleted: number;
}

/** The compact role through the whole process: late data makes parts, a pass folds them, answers stay exact. */
describe.each(MODES)('compaction in the server, %s', (mode) => {
  let s4: S4Process | undefined;
  afterAll(async () => {
    await s4?.stop();
  });

  it('folds the parts late data made into one per window, keeps every answer, deletes the replaced parts after the grace', async () => {
    s4 = await S4Process.start(
      // Hour windows only: a run just after midnight must not also fold yesterday into a day object.
      await modeEnv(mode, { S4_COMPACT_SETTLE_MS: '0', S4_COMPACT_DELETE_GRACE_MS: '0', S4_COMPACT_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000', S4_COMPACT_DAY_AFTER_MS: '86400000' }),
    );
    const url = s4.url;
    const random = rng(11);
    const model = new ExpectedStore();
    const series = Array.from({ length: 12 }, (_, i) => ({ metric: 'compact.m', tags: { id: `s${i}` } }));
    // Three rounds of writes into the same two hours, each flushed: three parts per shard-window,
    // later rounds overwriting some timestamps of earlier ones.
    for (let round = 0; round < 3; round++) {
      const samples = [];
      for (const s of series)
        for (let k = 0; k < 200; k++) {
          const ts = H0 + Math.floor(random() * 2) * H + Math.floor(random() * 600) * 1000;
          samples.push({ ...s, ts, fields: { value: round * 1000 + k, round } });
        }
      await expectOk(await post(`${url}/v1/write`, { samples }));
      for (const x of samples) model.write(x.metric, x.tags, x.ts, x.fields);
      await expectOk(await post(`${url}/v1/admin/flush`, {}));
    }
    const range = { metric: 'compact.m', from: String(H0), to: String(H0 + 2 * H) };
    const expected = normalise(model.expected());
    expect(normalise(await queryAll(url, range, 'msgpack'))).toEqual(expected);

    const first = (await (await expectOk(await post(`${url}/v1/admin/compact`, {}))).json()) as CompactResult;
    expect(first.windows).toBeGreaterThan(0);
    expect(first.partsIn).toBe(first.windows * 3);
    expect(first.bytesOut).toBeLessThan(first.bytesIn);
    expect(normalise(await queryAll(url, range, 'msgpack'))).toEqual(expected);
    expect(normalise(await queryAll(url, range, 'json'))).toEqual(expected);

    // Nothing left to fold; the replaced parts (grace 0) go now.
    const second = (await (await expectOk(await post(`${url}/v1/admin/compact`, {}))).json()) as CompactResult;
    expect(second.windows).toBe(0);
    expect(second.deleted).toBe(first.partsIn);
    expect(normalise(await queryAll(url, range, 'msgpack'))).toEqual(expected);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^s4_compact_windows_total ${first.windows}$`, 'm'));
  });
});
