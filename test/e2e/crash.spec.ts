import { afterAll, describe, expect, it } from 'vitest';
import { WINDOW_MS, hourName, segmentShardPrefix, seriesId, shardOf, type ObjectStore } from '@s4/core';
import { FilesystemObjectStore, S3ObjectStore } from '@s4/storage';
import { expectOk, normalise, post, queryAll } from '../support/client.js';
import { MODES, modeEnv } from '../support/modes.js';
import { ExpectedStore, rng } from '../support/model.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 1, 1, 0);
const ROUNDS = 20;
const SHARDS = 16;
/** Windows of the watched shard that are still to flush when the kill lands, at the least. */
const MARGIN = 3;
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

/** The server's object store, opened beside it, to watch the flush write its parts. */
function storeOf(env: Record<string, string>): ObjectStore {
  if (env.S4_S3_BUCKET === undefined) return new FilesystemObjectStore(`${env.S4_DATA_DIR}/objects`);
  return new S3ObjectStore({ bucket: env.S4_S3_BUCKET, prefix: '', region: env.AWS_REGION ?? 'us-east-1', endpoint: env.S4_S3_ENDPOINT, forcePathStyle: true, maxSockets: 4 });
}

async function count(objects: ObjectStore, prefix: string): Promise<number> {
  let n = 0;
  for await (const _ of objects.list(prefix)) n++;
  return n;
}

describe.each(MODES)('crash safety: SIGKILL during flush, %s', (mode) => {
  let s4: S4Process | undefined;
  let objects: ObjectStore | undefined;
  afterAll(async () => {
    await s4?.stop();
    await objects?.close();
  });

  it(`returns every acknowledged sample exactly once after ${ROUNDS} kills at random points of a flush`, async () => {
    const random = rng(7);
    const model = new ExpectedStore();
    const env = await modeEnv(mode, { S4_LEASE_TTL_MS: '1000', S4_SHARDS: String(SHARDS) });
    const ns = env.S4_NAMESPACE!;
    const watch = storeOf(env);
    objects = watch;
    s4 = await S4Process.start(env);
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

      // Where the kill lands: once the part of window `j` of one shard is written. A shard flushes
      // its windows one after another, oldest first, and the flush answers only when every shard
      // is done, so with MARGIN windows of that shard still to go the flush is certainly running.
      // The shard and j are random: the kill falls before, between or after other shards' parts,
      // and between a part's upload and its registration or after it.
      const byShard = new Map<number, Set<number>>();
      for (const x of samples) {
        const shard = shardOf(seriesId(x), SHARDS);
        const windows = byShard.get(shard) ?? new Set<number>();
        windows.add(Math.floor(x.ts / WINDOW_MS) * WINDOW_MS);
        byShard.set(shard, windows);
      }
      const candidates = [...byShard].filter(([, w]) => w.size > MARGIN);
      const [shard, windowSet] = candidates[Math.floor(random() * candidates.length)]!;
      const windows = [...windowSet].sort((a, b) => a - b);
      const window = windows[Math.floor(random() * (windows.length - MARGIN))]!;
      const folder = `${segmentShardPrefix({ ns, shard })}${hourName(window)}/`;
      const partsBefore = await count(watch, folder);

      let killed = false;
      const deadline = Date.now() + 60_000;
      while (!killed) {
        expect(Date.now(), 'the watched part was never written').toBeLessThan(deadline);
        let answered = false;
        const flush = fetch(`${s4.url}/v1/admin/flush`, { method: 'POST' }).then(
          async (r) => {
            answered = true;
            return (await r.json()) as { busyShards: number };
          },
          () => 'killed' as const,
        );
        while (!answered && (await count(watch, folder)) === partsBefore);
        if (answered) {
          // The watched shard was skipped: its lease is still held by the process the last round
          // killed, until it expires. Flush again.
          const r = await flush;
          expect(r !== 'killed' && r.busyShards, 'a flush skipped no shard yet wrote no part of the watched window').toBeGreaterThan(0);
          continue;
        }
        await s4.kill();
        killed = true;
        if ((await flush) === 'killed') killedDuringFlush++;
      }
      await s4.start();
    }
    // Every kill landed while the flush request was still unanswered.
    expect(killedDuringFlush).toBe(ROUNDS);

    const range = { metric: 'crash.m', from: String(H0), to: String(H0 + 12 * H) };
    expect(normalise(await queryAll(s4.url, range, 'msgpack'))).toEqual(normalise(model.expected()));
    await flushToEnd(s4.url);
    expect(normalise(await queryAll(s4.url, range, 'msgpack'))).toEqual(normalise(model.expected()));
  });
});
