import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAY_MS, segmentKey, type HotTier, type ObjectStore } from '@s4/core';
import { CatalogStore, Flusher, LATE_LOG_BYTES, LATE_SHARD_BYTES, QueryEngine, Writer, mergeSources, parseWrite } from '@s4/engine';
import { decodeRecords, encodeSegment } from '@s4/format';
import { EmbeddedHotTier, FilesystemObjectStore } from '@s4/storage';

async function adapters(): Promise<{ hot: HotTier; objects: ObjectStore }> {
  const dir = mkdtempSync(join(tmpdir(), 's4-flusher-'));
  return { hot: await EmbeddedHotTier.open({ dir: join(dir, 'hot'), fsync: 'never' }), objects: new FilesystemObjectStore(join(dir, 'objects')) };
}

describe('Flusher', () => {
  it('never runs two flushes of one shard at once in one process', async () => {
    const { hot, objects } = await adapters();
    const opts = { ns: 'default', shards: 1 };
    const clock = { now: () => Date.UTC(2026, 0, 2) };
    const catalogs = new CatalogStore(objects);
    const flusher = new Flusher(hot, objects, catalogs, { ...opts, owner: 'me', leaseTtlMs: 60_000, clock });
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const H0 = Date.UTC(2026, 0, 1);
    const samples = Array.from({ length: 5000 }, (_, i) => ({ metric: 'm', ts: H0 + i * 100, fields: { v: i } }));
    await writer.write(parseWrite({ kind: 'json', body: { samples } }, { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 }, clock.now()));
    const [a, b] = await Promise.all([flusher.flushAll(clock.now()), flusher.flushAll(clock.now())]);
    expect(a.samples + b.samples).toBe(5000);
    expect(a.objects + b.objects).toBe(1);
    const query = new QueryEngine(hot, objects, catalogs, { ...opts, concurrency: 4, cacheBytes: 1 << 20 });
    const out = [];
    for await (const s of query.query({ metric: 'm', tags: {}, from: H0, to: H0 + 3_600_000 })) out.push(s);
    expect(out[0]!.ts).toHaveLength(5000);
    await hot.close();
  });
});

describe('Flusher leases', () => {
  const opts = { ns: 'default', shards: 1 };
  const clock = { now: () => Date.UTC(2026, 0, 2) };
  const H0 = Date.UTC(2026, 0, 1);
  const limits = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 };

  /** A flusher whose upload stalls well past its lease's TTL, running `during` while it stalls. */
  async function stalledFlush(during: (hot: HotTier) => Promise<void>) {
    const { hot, objects } = await adapters();
    const stalling: ObjectStore = Object.assign(Object.create(objects) as ObjectStore, {
      put: async (...args: Parameters<ObjectStore['put']>) => {
        // The thread itself stalls (as a starved or paused process does): no timer runs meanwhile.
        // An awaited sleep would let the renewal timer keep the lease alive, and whether the other
        // owner found it expired would depend on the machine's load.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
        await during(hot);
        return objects.put(...args);
      },
    });
    const catalogs = new CatalogStore(objects);
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const samples = Array.from({ length: 100 }, (_, i) => ({ metric: 'm', ts: H0 + i * 1000, fields: { v: i } }));
    await writer.write(parseWrite({ kind: 'json', body: { samples } }, limits, clock.now()));
    const flusher = new Flusher(hot, stalling, catalogs, { ...opts, owner: 'me', leaseTtlMs: 50, clock });
    const stats = await flusher.flushAll(clock.now());
    return { hot, stats };
  }

  it('finishes a flush that stalled past its lease TTL when nobody took the shard meanwhile', async () => {
    const { hot, stats } = await stalledFlush(async () => undefined);
    expect(stats).toMatchObject({ objects: 1, samples: 100, busyShards: 0 });
    expect(await hot.openWindows({ ns: 'default', shard: 0 })).toEqual([]);
    await hot.close();
  });

  it('counts the shard busy, and keeps its data hot, when another owner took it while the flush stalled', async () => {
    const { hot, stats } = await stalledFlush(async (h) => {
      expect(await h.acquireLease({ ns: 'default', shard: 0 }, 'other', 60_000)).not.toBeNull();
    });
    expect(stats).toMatchObject({ objects: 0, busyShards: 1 });
    expect(await hot.openWindows({ ns: 'default', shard: 0 })).toEqual([H0]);
    await hot.close();
  });
});

describe('Flusher uploads', () => {
  it('never overwrites an object at the key it would use: a late upload of an earlier attempt cannot replace a registered part', async () => {
    const { hot, objects } = await adapters();
    const opts = { ns: 'default', shards: 1 };
    const clock = { now: () => Date.UTC(2026, 0, 2) };
    const catalogs = new CatalogStore(objects);
    const H0 = Date.UTC(2026, 0, 1);
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const samples = Array.from({ length: 100 }, (_, i) => ({ metric: 'm', ts: H0 + i * 1000, fields: { v: i } }));
    await writer.write(parseWrite({ kind: 'json', body: { samples } }, { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 }, clock.now()));
    // What an earlier, timed-out attempt under the same lease left at the first key (fence 1, part 1).
    const squatter = segmentKey({ ns: 'default', shard: 0 }, H0, 1, 1);
    await objects.put(squatter, Uint8Array.of(9, 9, 9));
    const stats = await new Flusher(hot, objects, catalogs, { ...opts, owner: 'me', leaseTtlMs: 60_000, clock }).flushAll(clock.now());
    expect(stats.objects).toBe(1);
    const left = await objects.get(squatter);
    expect(left && !left.notModified ? [...left.body] : null).toEqual([9, 9, 9]);
    const query = new QueryEngine(hot, objects, catalogs, { ...opts, concurrency: 4, cacheBytes: 1 << 20 });
    const out = [];
    for await (const s of query.query({ metric: 'm', tags: {}, from: H0, to: H0 + 3_600_000 })) out.push(s);
    expect(out[0]!.ts).toHaveLength(100);
    await hot.close();
  });
});

describe('Flusher encoding', () => {
  it('writes the part that encoding the whole decoded window at once writes, with its span in the catalog', async () => {
    const { hot, objects } = await adapters();
    const opts = { ns: 'default', shards: 1 };
    const ref = { ns: 'default', shard: 0 };
    const clock = { now: () => Date.UTC(2026, 0, 2) };
    const H0 = Date.UTC(2026, 0, 1);
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const limits = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 };
    const write = (samples: unknown[]) => writer.write(parseWrite({ kind: 'json', body: { samples } }, limits, clock.now()));
    // More series than four release slices (the encoder asks them in id order, not in arrival
    // order), out-of-order and overwritten timestamps, nested records and strings.
    const n = 2_100;
    await write(Array.from({ length: n }, (_, i) => ({ metric: `m${i % 3}`, tags: { host: `h${i}` }, ts: H0 + 300_000 - i * 100, fields: { v: i } })));
    await write(Array.from({ length: n }, (_, i) => ({ metric: `m${i % 3}`, tags: { host: `h${i}` }, ts: H0 + 1_000 + i, fields: { v: -i, s: `x${i}` } })));
    await write(Array.from({ length: n / 2 }, (_, i) => ({ metric: `m${(i * 2) % 3}`, tags: { host: `h${i * 2}` }, ts: H0 + 300_000 - i * 200, fields: { v: i + 0.5 } })));
    await write(Array.from({ length: 20 }, (_, i) => ({ metric: 'rec', tags: { machine: `k${i}` }, ts: H0 + 5_000 + i, fields: { r: { a: i, b: [i, { c: `y${i}` }] } } })));
    const logs = await hot.readWindow(ref, H0);
    const expected = encodeSegment({
      ns: ref.ns,
      shard: ref.shard,
      window: H0,
      series: logs.map((l) => {
        const m = mergeSources([{ data: decodeRecords(l.data), sortedUnique: false }]);
        return { id: l.id, metric: l.key.metric, tags: { ...l.key.tags }, ts: m.ts, fields: m.fields };
      }),
    });
    const catalogs = new CatalogStore(objects);
    const stats = await new Flusher(hot, objects, catalogs, { ...opts, owner: 'me', leaseTtlMs: 60_000, clock }).flushAll(clock.now());
    expect(stats).toMatchObject({ objects: 1, series: n + 20, samples: 2 * n + 20 });
    const { catalog } = await catalogs.load(ref, Math.floor(H0 / DAY_MS) * DAY_MS);
    expect(catalog.entries).toHaveLength(1);
    const entry = catalog.entries[0]!;
    const got = await objects.get(entry.key);
    expect(got && !got.notModified ? Buffer.from(got.body).equals(Buffer.from(expected)) : null).toBe(true);
    expect(entry).toMatchObject({ series: n + 20, samples: 2 * n + 20, minTs: H0 + 1_000, maxTs: H0 + 300_000 });
    expect(await hot.openWindows(ref)).toEqual([]);
    await hot.close();
  });
});

describe('Flusher late data', () => {
  const opts = { ns: 'default', shards: 1 };
  const ref = { ns: 'default', shard: 0 };
  const H0 = Date.UTC(2026, 0, 1);
  const limits = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 };

  /** A flusher with S4_FLUSH_LATE_MS = 60 s on a clock the test moves, and a writer into the closed hour H0. */
  async function setup() {
    const { hot, objects } = await adapters();
    let now = Date.UTC(2026, 0, 2);
    const clock = { now: () => now };
    const catalogs = new CatalogStore(objects);
    const flusher = new Flusher(hot, objects, catalogs, { ...opts, owner: 'me', leaseTtlMs: 60_000, lateMs: 60_000, clock });
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const write = (samples: unknown[]) => writer.write(parseWrite({ kind: 'json', body: { samples } }, limits, now));
    /** One late float sample for each of `n` series, at `ts`. */
    const trickle = (n: number, ts: number) => write(Array.from({ length: n }, (_, i) => ({ metric: 'm', tags: { host: `h${i}` }, ts, fields: { v: i } })));
    const parts = async () => (await catalogs.load(ref, Math.floor(H0 / DAY_MS) * DAY_MS)).catalog.entries.length;
    const points = async () => {
      const query = new QueryEngine(hot, objects, catalogs, { ...opts, concurrency: 4, cacheBytes: 1 << 20 });
      let total = 0;
      for await (const s of query.query({ metric: 'm', tags: {}, from: H0, to: H0 + 3_600_000 })) total += s.ts.length;
      return total;
    };
    return { hot, flusher, write, trickle, parts, points, advance: (ms: number) => (now += ms), now: () => now };
  }

  it('lets a few late samples a series wait up to lateMs after a periodic flush of their window, answering them from the hot tier meanwhile', async () => {
    const t = await setup();
    await t.trickle(500, H0 + 1_000);
    expect((await t.flusher.flushAll(t.now(), 'periodic')).objects).toBe(1); // never flushed: flushed now
    await t.trickle(500, H0 + 2_000);
    t.advance(10_000);
    expect((await t.flusher.flushAll(t.now(), 'periodic')).objects).toBe(0);
    expect(await t.hot.openWindows(ref)).toEqual([H0]);
    expect(await t.parts()).toBe(1);
    expect(await t.points()).toBe(1_000);
    t.advance(50_000); // lateMs since the first flush
    expect(await t.flusher.flushAll(t.now(), 'periodic')).toMatchObject({ objects: 1, samples: 500 });
    expect(await t.hot.openWindows(ref)).toEqual([]);
    expect(await t.parts()).toBe(2);
    expect(await t.points()).toBe(1_000);
    await t.hot.close();
  });

  it('flushes late data at once when an admin flush asks, when it averages many bytes a series, or when lateMs is 0', async () => {
    const t = await setup();
    await t.trickle(100, H0 + 1_000);
    await t.flusher.flushAll(t.now(), 'periodic');
    await t.trickle(100, H0 + 2_000);
    expect((await t.flusher.flushAll(t.now(), 'all')).objects).toBe(1);

    // A backfill or records: ~40 samples a series is more than LATE_LOG_BYTES a log.
    for (let k = 0; k < 40; k++) await t.trickle(100, H0 + 10_000 + k * 1_000);
    expect(await t.flusher.flushAll(t.now(), 'periodic')).toMatchObject({ objects: 1, samples: 4_000 });

    const { hot, objects } = await adapters();
    const clock = { now: () => Date.UTC(2026, 0, 2) };
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const eager = new Flusher(hot, objects, new CatalogStore(objects), { ...opts, owner: 'me', leaseTtlMs: 60_000, lateMs: 0, clock });
    for (const ts of [H0 + 1_000, H0 + 2_000]) {
      await writer.write(parseWrite({ kind: 'json', body: { samples: [{ metric: 'm', ts, fields: { v: 1 } }] } }, limits, clock.now()));
      expect((await eager.flushAll(clock.now(), 'periodic')).objects).toBe(1);
    }
    await hot.close();
    await t.hot.close();
  });

  it('holds no more than LATE_SHARD_BYTES of a shard back', async () => {
    const t = await setup();
    await t.trickle(10, H0 + 1_000);
    await t.flusher.flushAll(t.now(), 'periodic');
    // Logs under LATE_LOG_BYTES each (one sample of ~200 bytes) but many of them: past the shard's bound, they are flushed.
    const text = 'x'.repeat(200);
    const n = Math.ceil(LATE_SHARD_BYTES / 200);
    for (let at = 0; at < n; at += 10_000)
      await t.write(Array.from({ length: Math.min(10_000, n - at) }, (_, i) => ({ metric: 'm', tags: { host: `h${at + i}` }, ts: H0 + 2_000, fields: { s: text } })));
    const held = await t.hot.shardStats(ref);
    expect(held.bytes).toBeGreaterThanOrEqual(LATE_SHARD_BYTES);
    expect(held.bytes).toBeLessThan(LATE_LOG_BYTES * held.logs);
    expect((await t.flusher.flushAll(t.now(), 'periodic')).objects).toBe(1);
    await t.hot.close();
  }, 60_000);
});
