import { Redis } from 'ioredis';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseLostError, selects, seriesId, type HotAppend, type HotTier, type SeriesKey, type ShardRef, type TagMatcher } from '@s4/core';
import { EmbeddedHotTier, RedisHotTier } from '@s4/storage';
import { redisUrl, tempDir, uniqueNamespace } from '../support/servers.js';

const H = 3_600_000;

/** Each adapter: how to open it, and how to open it again over the same state (a restart). */
interface Adapter {
  open(): Promise<{ tier: HotTier; reopen: () => Promise<HotTier> }>;
}

const adapters: [string, Adapter][] = [
  [
    'embedded',
    {
      async open() {
        const dir = tempDir('hot');
        return { tier: await EmbeddedHotTier.open({ dir, fsync: 'always' }), reopen: () => EmbeddedHotTier.open({ dir, fsync: 'always' }) };
      },
    },
  ],
  ['redis', { async open() { return { tier: new RedisHotTier(redisUrl()), reopen: async () => new RedisHotTier(redisUrl()) }; } }],
];

describe.each(adapters)('HotTier contract: %s', (_name, adapter) => {
  const open: HotTier[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
  });
  async function start() {
    const h = await adapter.open();
    open.push(h.tier);
    const ref: ShardRef = { ns: uniqueNamespace(), shard: 3 };
    return { ...h, ref };
  }
  const key = (i: number): SeriesKey => ({ metric: i % 2 ? 'cpu' : 'mem', tags: { host: `h${i}` } });
  const entry = (ref: ShardRef, window: number, i: number, bytes: number[]): HotAppend => ({ ref, window, id: seriesId(key(i)), key: key(i), data: Uint8Array.from(bytes) });

  it('appends to per-series logs and reads them back per window', async () => {
    const { tier, ref } = await start();
    await tier.append([entry(ref, 0, 1, [1, 2]), entry(ref, 0, 2, [9]), entry(ref, H, 1, [5])]);
    await tier.append([entry(ref, 0, 1, [3])]);
    expect(await tier.openWindows(ref)).toEqual([0, H]);
    const logs = await tier.readWindow(ref, 0);
    const byId = Object.fromEntries(logs.map((l) => [l.id, [...l.data]]));
    expect(byId[seriesId(key(1))]).toEqual([1, 2, 3]);
    expect(byId[seriesId(key(2))]).toEqual([9]);
    expect(logs.find((l) => l.id === seriesId(key(1)))?.key).toEqual(key(1));
  });

  it('reads back every log of a window holding more series than one read of a flush fetches', async () => {
    const { tier, ref } = await start();
    const n = 2_500;
    await tier.append(Array.from({ length: n }, (_, i) => entry(ref, 0, i, [i & 0xff, i >> 8])));
    const logs = await tier.readWindow(ref, 0);
    expect(logs).toHaveLength(n);
    const seen = new Map(logs.map((l) => [l.id, l]));
    for (let i = 0; i < n; i++) {
      const log = seen.get(seriesId(key(i)));
      expect(log && [...log.data]).toEqual([i & 0xff, i >> 8]);
      expect(log?.key).toEqual(key(i));
    }
  });

  it('takes one append and one release of 40,000 series of one shard (a scraper round)', async () => {
    const { tier, ref } = await start();
    const n = 40_000;
    await tier.append(Array.from({ length: n }, (_, i) => entry(ref, 0, i, [i & 0xff])));
    expect(await tier.readWindow(ref, 0)).toHaveLength(n);
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.release(lease, 0, Array.from({ length: n }, (_, i) => ({ id: seriesId(key(i)), length: 1 })));
    expect(await tier.openWindows(ref)).toEqual([]);
  });

  it('scans one metric over the windows a range overlaps', async () => {
    const { tier, ref } = await start();
    await tier.append([entry(ref, 0, 1, [1]), entry(ref, 0, 2, [2]), entry(ref, H, 1, [3]), entry(ref, 2 * H, 1, [4])]);
    const scan = await tier.scan(ref, 'cpu', H - 1, 2 * H);
    expect(scan.logs.map((l) => [l.window, [...l.data]]).sort()).toEqual([[0, [1]], [H, [3]]]);
    expect((await tier.seriesIn(ref, undefined, 0, 3 * H)).length).toBe(2);
  });

  it('scans the logs of one metric only, and forgets a log released whole until it is appended again', async () => {
    const { tier, ref } = await start();
    await tier.append([1, 2, 3, 4, 5].map((i) => entry(ref, 0, i, [i])));
    const cpu = async () => (await tier.scan(ref, 'cpu', 0, H)).logs.map((l) => [l.id, [...l.data]]).sort();
    const ids = (xs: number[]) => xs.map((i) => [seriesId(key(i)), [i]]).sort();
    expect(await cpu()).toEqual(ids([1, 3, 5]));
    expect((await tier.scan(ref, 'mem', 0, H)).logs.map((l) => l.key)).toEqual(expect.arrayContaining([key(2), key(4)]));
    expect(await tier.scan(ref, 'disk', 0, H)).toMatchObject({ logs: [] });
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.release(lease, 0, [{ id: seriesId(key(3)), length: 1 }, { id: seriesId(key(2)), length: 1 }]);
    expect(await cpu()).toEqual(ids([1, 5]));
    expect((await tier.seriesIn(ref, 'mem', 0, H)).map((k) => k.tags.host)).toEqual(['h4']);
    await tier.append([entry(ref, 0, 3, [3])]);
    expect(await cpu()).toEqual(ids([1, 3, 5]));
    expect((await tier.seriesIn(ref, undefined, 0, H)).map((k) => k.tags.host).sort()).toEqual(['h1', 'h3', 'h4', 'h5']);
  });

  it('scans only the series a selector picks, by tag equality and by matchers, over the windows of the range', async () => {
    const { tier, ref } = await start();
    const k = (host: string, dc: string): SeriesKey => ({ metric: 'cpu', tags: { host, dc } });
    const put = (window: number, key: SeriesKey, bytes: number[]): HotAppend => ({ ref, window, id: seriesId(key), key, data: Uint8Array.from(bytes) });
    const a = k('a', 'x');
    const b = k('b', 'x');
    const c = k('c', 'y');
    // A series with one more tag than an equality names is selected by it too.
    const a2: SeriesKey = { metric: 'cpu', tags: { host: 'a', dc: 'x', rack: 'r1' } };
    await tier.append([put(0, a, [1]), put(0, b, [2]), put(0, c, [3]), put(H, a, [4]), put(H, a2, [5]), put(2 * H, a, [6]), entry(ref, 0, 2, [7])]);
    const scan = async (tags: Record<string, string>, matchers?: TagMatcher[], from = 0, to = 2 * H) =>
      (await tier.scan(ref, 'cpu', from, to, { tags, matchers })).logs.map((l) => [l.window, l.key.tags.host, [...l.data], l.id === seriesId(l.key)]).sort();
    expect(await scan({ host: 'a', dc: 'x' })).toEqual([[0, 'a', [1], true], [H, 'a', [4], true], [H, 'a', [5], true]]);
    expect(await scan({ host: 'a' }, undefined, H, 3 * H)).toEqual([[H, 'a', [4], true], [H, 'a', [5], true], [2 * H, 'a', [6], true]]);
    expect(await scan({}, [{ key: 'dc', op: '=', value: 'x' }, { key: 'host', op: '!=', value: 'a' }])).toEqual([[0, 'b', [2], true]]);
    expect(await scan({}, [{ key: 'host', op: '=~', value: 'b|c' }], 0, H)).toEqual([[0, 'b', [2], true], [0, 'c', [3], true]]);
    expect(await scan({}, [{ key: 'rack', op: '!~', value: 'r.*' }], H, 2 * H)).toEqual([[H, 'a', [4], true]]);
    expect(await scan({ host: 'nobody' })).toEqual([]);
    // No condition: every series of the metric, as without a selector.
    expect((await scan({})).length).toBe(5);
    // The metric still bounds a selector (the mem series has host h2, no dc).
    expect((await tier.scan(ref, 'mem', 0, H, { tags: { host: 'h2' } })).logs.map((l) => l.key)).toEqual([key(2)]);
  });

  it('reads a selected scan\'s logs and generation together, a released log found no more once the generation moved', async () => {
    const { tier, ref } = await start();
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.append([entry(ref, 0, 1, [1, 2]), entry(ref, 0, 3, [3])]);
    const one = { tags: { host: 'h1' } };
    const before = await tier.scan(ref, 'cpu', 0, H, one);
    expect(before.logs.map((l) => [...l.data])).toEqual([[1, 2]]);
    // A flush: register, bump, release. A scan after it sees the new generation and not the released bytes.
    await tier.bumpGeneration(lease);
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 1 }]);
    const after = await tier.scan(ref, 'cpu', 0, H, one);
    expect(after.generation).toBe(before.generation + 1);
    expect(after.logs.map((l) => [...l.data])).toEqual([[2]]);
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 2 }]);
    expect(await tier.scan(ref, 'cpu', 0, H, one)).toEqual({ generation: before.generation + 1, logs: [] });
    expect((await tier.scan(ref, 'cpu', 0, H, { tags: { host: 'h3' } })).logs.map((l) => [...l.data])).toEqual([[3]]);
  });

  it('selects a few series out of a shard holding thousands of one metric', async () => {
    const { tier, ref } = await start();
    const n = 5_000;
    await tier.append(Array.from({ length: n }, (_, i) => entry(ref, 0, 2 * i + 1, [i & 0xff])));
    const scan = await tier.scan(ref, 'cpu', 0, H, { tags: {}, matchers: [{ key: 'host', op: '=~', value: 'h(1|4999|9999)' }] });
    expect(scan.logs.map((l) => [l.key.tags.host, [...l.data]]).sort()).toEqual([['h1', [0]], ['h4999', [2499 & 0xff]], ['h9999', [4999 & 0xff]]]);
    expect((await tier.seriesIn(ref, 'cpu', 0, H)).length).toBe(n);
  });

  it('counts the unflushed bytes and logs of one shard, released bytes excluded', async () => {
    const { tier, ref } = await start();
    const other: ShardRef = { ...ref, shard: ref.shard + 1 };
    expect(await tier.shardStats(ref)).toEqual({ bytes: 0, logs: 0 });
    await tier.append([entry(ref, 0, 1, [1, 2, 3]), entry(ref, 0, 2, [7]), entry(ref, H, 1, [5, 6]), entry(other, 0, 1, [9, 9, 9, 9])]);
    expect(await tier.shardStats(ref)).toEqual({ bytes: 6, logs: 3 });
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 2 }, { id: seriesId(key(2)), length: 1 }]);
    expect(await tier.shardStats(ref)).toEqual({ bytes: 3, logs: 2 });
    expect(await tier.shardStats(other)).toEqual({ bytes: 4, logs: 1 });
  });

  it('hands out leases with increasing fences, one owner at a time', async () => {
    const { tier, ref } = await start();
    const a = await tier.acquireLease(ref, 'a', 10_000);
    expect(a).not.toBeNull();
    expect(await tier.acquireLease(ref, 'b', 10_000)).toBeNull();
    expect(await tier.renewLease(a!, 10_000)).toBe(true);
    await tier.releaseLease(a!);
    const b = await tier.acquireLease(ref, 'b', 10_000);
    expect(b!.fence).toBeGreaterThan(a!.fence);
    expect(await tier.renewLease(a!, 10_000)).toBe(false);
  });

  it('keeps an expired lease its holder\'s until another owner takes the shard or the holder gives it up', async () => {
    const { tier, ref } = await start();
    await tier.append([entry(ref, 0, 1, [1, 2]), entry(ref, 0, 2, [3])]);
    const stalled = (await tier.acquireLease(ref, 'a', 50))!;
    await new Promise((ok) => setTimeout(ok, 120)); // a thread stuck past its TTL on one long step
    await tier.bumpGeneration(stalled); // nobody took the shard: still the holder's
    await tier.release(stalled, 0, [{ id: seriesId(key(2)), length: 1 }]);
    expect(await tier.renewLease(stalled, 50)).toBe(true);
    await new Promise((ok) => setTimeout(ok, 120));
    const next = (await tier.acquireLease(ref, 'b', 10_000))!; // expired: another owner may take it
    expect(next.fence).toBeGreaterThan(stalled.fence);
    expect(await tier.renewLease(stalled, 10_000)).toBe(false);
    await expect(tier.release(stalled, 0, [{ id: seriesId(key(1)), length: 2 }])).rejects.toBeInstanceOf(LeaseLostError);
    expect(await tier.renewLease(next, 10_000)).toBe(true);

    await tier.releaseLease(next);
    expect(await tier.renewLease(next, 10_000)).toBe(false); // given up: a late background renewal must not take it back
    await expect(tier.bumpGeneration(next)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await tier.acquireLease(ref, 'c', 10_000)).not.toBeNull();
    expect((await tier.readWindow(ref, 0)).map((l) => [l.id, [...l.data]])).toEqual([[seriesId(key(1)), [1, 2]]]);
  });

  it('gives a lease to one owner only when several ask at once (flusher and compactor of one shard)', async () => {
    const { tier, ref } = await start();
    const got = await Promise.all(['a', 'b', 'c', 'd'].map((owner) => tier.acquireLease(ref, owner, 10_000)));
    const held = got.filter((l) => l !== null);
    expect(held).toHaveLength(1);
    expect(await tier.renewLease(held[0]!, 10_000)).toBe(true);
  });

  it('releases flushed bytes, keeps later appends, and closes empty windows', async () => {
    const { tier, ref } = await start();
    await tier.append([entry(ref, 0, 1, [1, 2, 3]), entry(ref, 0, 2, [7])]);
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.append([entry(ref, 0, 1, [4])]); // arrives while flushing
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 3 }, { id: seriesId(key(2)), length: 1 }]);
    const logs = await tier.readWindow(ref, 0);
    expect(logs.map((l) => [l.id, [...l.data]])).toEqual([[seriesId(key(1)), [4]]]);
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 1 }]);
    expect(await tier.openWindows(ref)).toEqual([]);
    expect((await tier.scan(ref, 'cpu', 0, H)).logs).toEqual([]);
  });

  it('lists a log again when appends come back after a release emptied it, its window and metric included', async () => {
    const { tier, ref } = await start();
    await tier.append([entry(ref, 0, 1, [1]), entry(ref, 0, 1, [2]), entry(ref, 0, 2, [3])]);
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 2 }, { id: seriesId(key(2)), length: 1 }]);
    expect(await tier.openWindows(ref)).toEqual([]);
    await tier.append([entry(ref, 0, 1, [4]), entry(ref, 0, 1, [5])]);
    expect(await tier.openWindows(ref)).toEqual([0]);
    expect((await tier.readWindow(ref, 0)).map((l) => [l.id, l.key, [...l.data]])).toEqual([[seriesId(key(1)), key(1), [4, 5]]]);
    expect((await tier.scan(ref, 'cpu', 0, H)).logs.map((l) => [...l.data])).toEqual([[4, 5]]);
    expect(await tier.seriesIn(ref, 'cpu', 0, H)).toEqual([key(1)]);
    // A partly released log keeps its listing for the appends after it.
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 1 }]);
    await tier.append([entry(ref, 0, 1, [6])]);
    expect((await tier.scan(ref, 'cpu', 0, H)).logs.map((l) => [...l.data])).toEqual([[5, 6]]);
    expect(await tier.seriesIn(ref, 'cpu', 0, H)).toEqual([key(1)]);
  });

  it('refuses release and generation bumps from a stale lease holder', async () => {
    const { tier, ref } = await start();
    await tier.append([entry(ref, 0, 1, [1])]);
    const old = (await tier.acquireLease(ref, 'old', 10_000))!;
    await tier.releaseLease(old);
    await tier.acquireLease(ref, 'new', 10_000);
    await expect(tier.release(old, 0, [{ id: seriesId(key(1)), length: 1 }])).rejects.toBeInstanceOf(LeaseLostError);
    await expect(tier.bumpGeneration(old)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await tier.readWindow(ref, 0)).length).toBe(1);
  });

  it('bumps the generation seen by scans', async () => {
    const { tier, ref } = await start();
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    const before = (await tier.scan(ref, 'cpu', 0, H)).generation;
    expect(await tier.bumpGeneration(lease)).toBe(before + 1);
    expect((await tier.scan(ref, 'cpu', 0, H)).generation).toBe(before + 1);
    expect(await tier.generation(ref)).toBe(before + 1);
  });

  it('keeps every acknowledged append, release, generation and fence across a restart', async () => {
    const { tier, ref, reopen } = await start();
    await tier.append([entry(ref, 0, 1, [1, 2]), entry(ref, H, 2, [3])]);
    const lease = (await tier.acquireLease(ref, 'w', 1_000))!;
    await tier.bumpGeneration(lease);
    await tier.release(lease, H, [{ id: seriesId(key(2)), length: 1 }]);
    await tier.releaseLease(lease);
    await tier.close();
    open.pop();
    const again = await reopen();
    open.push(again);
    expect(await again.openWindows(ref)).toEqual([0]);
    expect((await again.readWindow(ref, 0)).map((l) => [...l.data])).toEqual([[1, 2]]);
    expect(await again.generation(ref)).toBe(1);
    const next = (await again.acquireLease(ref, 'w2', 1_000))!;
    expect(next.fence).toBeGreaterThan(lease.fence);
  });

  it('appends binary data with every byte value intact', async () => {
    const { tier, ref } = await start();
    const all = Array.from({ length: 256 }, (_, i) => i);
    await tier.append([entry(ref, 0, 1, all)]);
    expect([...(await tier.readWindow(ref, 0))[0]!.data]).toEqual(all);
  });
});

describe('redis hot tier over logs written before appends listed only new logs', () => {
  it('appends to, scans and releases a log whose keys were written on every append', async () => {
    const ref: ShardRef = { ns: uniqueNamespace(), shard: 1 };
    const key: SeriesKey = { metric: 'cpu', tags: { host: 'old' } };
    const id = seriesId(key);
    const p = `s4:{${ref.ns}:${ref.shard}}:`;
    // The keys the earlier script wrote for each append of window 0.
    const raw = new Redis(redisUrl());
    try {
      await raw.zadd(`${p}windows`, 0, '0');
      await raw.hsetnx(`${p}w:0:meta`, id, JSON.stringify(key));
      await raw.sadd(`${p}w:0:m:cpu`, id);
      await raw.append(`${p}w:0:log:${id}`, Buffer.from([1, 2]));
    } finally {
      raw.disconnect();
    }
    const tier = new RedisHotTier(redisUrl());
    try {
      await tier.append([{ ref, window: 0, id, key, data: Uint8Array.from([3]) }]);
      expect((await tier.readWindow(ref, 0)).map((l) => [l.key, [...l.data]])).toEqual([[key, [1, 2, 3]]]);
      expect((await tier.scan(ref, 'cpu', 0, H)).logs.map((l) => [...l.data])).toEqual([[1, 2, 3]]);
      expect((await tier.scan(ref, 'cpu', 0, H, { tags: { host: 'old' } })).logs.map((l) => [l.key, [...l.data]])).toEqual([[key, [1, 2, 3]]]);
      expect(await tier.seriesIn(ref, 'cpu', 0, H)).toEqual([key]);
      const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
      await tier.release(lease, 0, [{ id, length: 3 }]);
      expect(await tier.openWindows(ref)).toEqual([]);
    } finally {
      await tier.close();
    }
  });
});

describe('redis hot tier window reads', () => {
  it('read back every log of a window whose logs are larger than one read of a flush fetches, each once and intact', async () => {
    const ref: ShardRef = { ns: uniqueNamespace(), shard: 4 };
    const tier = new RedisHotTier(redisUrl());
    try {
      // 0.3-1.2 MB logs (records), then small ones: the reads are sized by the logs seen so far.
      const sizes = [...Array.from({ length: 12 }, (_, i) => 300_000 + i * 80_000), ...Array.from({ length: 30 }, (_, i) => 10 + i)];
      const entries: HotAppend[] = sizes.map((n, i) => {
        const key: SeriesKey = { metric: 'machine.record', tags: { machine: `m${i}` } };
        return { ref, window: 0, id: seriesId(key), key, data: Uint8Array.from({ length: n }, (_, j) => (i * 7 + j) & 255) };
      });
      await tier.append(entries);
      const logs = await tier.readWindow(ref, 0);
      const byId = new Map(logs.map((l) => [l.id, l]));
      expect(logs).toHaveLength(entries.length);
      for (const e of entries) expect(Buffer.from(byId.get(e.id)!.data).equals(Buffer.from(e.data))).toBe(true);
    } finally {
      await tier.close();
    }
  });
});

describe('redis hot tier appends', () => {
  it('go through when Redis no longer knows the append script (restarted, SCRIPT FLUSH), and keep keys of any text', async () => {
    const ref: ShardRef = { ns: uniqueNamespace(), shard: 2 };
    const key: SeriesKey = { metric: 'température', tags: { site: 'Zürich ☃', host: '机器-7' } };
    const id = seriesId(key);
    const tier = new RedisHotTier(redisUrl());
    const raw = new Redis(redisUrl());
    try {
      await tier.append([{ ref, window: 0, id, key, data: Uint8Array.from([1]) }]);
      expect(await raw.script('FLUSH')).toBe('OK');
      await tier.append([{ ref, window: 0, id, key, data: Uint8Array.from([2, 3]) }]);
      const logs = await tier.readWindow(ref, 0);
      expect(logs.map((l) => [l.id, l.key, [...l.data]])).toEqual([[id, key, [1, 2, 3]]]);
      expect(await tier.seriesIn(ref, 'température', 0, H)).toEqual([key]);
    } finally {
      raw.disconnect();
      await tier.close();
    }
  });
});

describe('embedded hot tier log', () => {
  it('shrinks its log file once flushed bytes dominate it, and keeps the live data', async () => {
    const { statSync } = await import('node:fs');
    const dir = tempDir('hotlog');
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', compactSlackBytes: 1024 });
    const ref = { ns: 'c', shard: 0 };
    const key = { metric: 'm', tags: {} };
    const id = seriesId(key);
    await tier.append([{ ref, window: 0, id, key, data: new Uint8Array(50_000) }, { ref, window: H, id, key, data: Uint8Array.of(7) }]);
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    await tier.release(lease, 0, [{ id, length: 50_000 }]);
    await tier.close(); // waits for the rewrite that follows the release
    expect(statSync(`${dir}/hot.wal`).size).toBeLessThan(1_000);
    const again = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    expect((await again.readWindow(ref, H)).map((l) => [...l.data])).toEqual([[7]]);
    await again.close();
  });
});

describe('embedded hot tier log of many small series', () => {
  it('is not rewritten while nothing was released, however much its keys and framing outweigh the samples', async () => {
    const { statSync } = await import('node:fs');
    const dir = tempDir('hotlog3');
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', compactSlackBytes: 1024 });
    const ref = { ns: 'c', shard: 0 };
    const keyOf = (i: number) => ({ metric: 'node_cpu_seconds', tags: { host: `host-${i}`, dc: `dc-${i % 8}` } });
    await tier.append([{ ref, window: 0, id: seriesId(keyOf(0)), key: keyOf(0), data: Uint8Array.of(1, 2, 3, 4) }]);
    const inode = statSync(`${dir}/hot.wal`).ino;
    for (let round = 0; round < 5; round++)
      await tier.append(Array.from({ length: 200 }, (_, i) => ({ ref, window: 0, id: seriesId(keyOf(i)), key: keyOf(i), data: Uint8Array.of(round, 2, 3, 4) })));
    await tier.close();
    // A rewrite publishes a new file by rename: the same inode means the log was only appended to.
    expect(statSync(`${dir}/hot.wal`).ino).toBe(inode);
    expect(statSync(`${dir}/hot.wal`).size).toBeGreaterThan(10 * 1024);
  });
});

describe('embedded hot tier log rewrite under load', () => {
  it('acknowledges appends that arrive while the log is being rewritten', async () => {
    const dir = tempDir('hotlog2');
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'always', compactSlackBytes: 1024 });
    const ref = { ns: 'c', shard: 0 };
    const key = { metric: 'm', tags: {} };
    const id = seriesId(key);
    await tier.append([{ ref, window: 0, id, key, data: new Uint8Array(200_000) }]);
    const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
    const release = tier.release(lease, 0, [{ id, length: 200_000 }]);
    // Keep appending, one at a time across event-loop turns, so some land mid-rewrite.
    const during: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      during.push(tier.append([{ ref, window: H * (i + 1), id, key, data: Uint8Array.of(i) }]));
      await new Promise((r) => setImmediate(r));
    }
    const settled = await Promise.race([Promise.all([release, ...during]).then(() => 'done'), new Promise((r) => setTimeout(() => r('stuck'), 5_000))]);
    expect(settled).toBe('done');
    expect(await tier.openWindows(ref)).toHaveLength(20);
    await tier.close();
  });
});

/** Whether a regular-expression matcher of this value compiles (the API refuses one that does not). */
function validRegex(pattern: string): boolean {
  try {
    new RegExp(`^(?:${pattern})$`, 'u');
    return true;
  } catch {
    return false;
  }
}

describe('redis hot tier selected scans', () => {
  it('find exactly the series a selector picks, with series released, written again and written before postings existed', async () => {
    const tagValue = fc.constantFrom('a', 'b', 'a=b', 'b:1', 'é', '机', '"a', 'a\\', 'a","host":"a', '}');
    const tags = fc.dictionary(fc.constantFrom('host', 'dc', 'a', 'a=b', 'x:1'), tagValue, { maxKeys: 3 });
    const series = fc.uniqueArray(fc.record({ metric: fc.constantFrom('cpu', 'c1', 'é'), tags }), { selector: (k) => seriesId(k), minLength: 1, maxLength: 25 });
    const matcher = fc.record({ key: fc.constantFrom('host', 'dc', 'a', 'a=b', 'x:1'), op: fc.constantFrom('=', '!=', '=~', '!~'), value: fc.oneof(tagValue, fc.constant('')) }).filter((m) => m.op === '=' || m.op === '!=' || (m.value !== '' && validRegex(m.value)));
    // Most selectors are made from a written series' tags (some of them), so that they pick something.
    const selector = fc.record({ metric: fc.constantFrom('cpu', 'c1', 'é'), tags, matchers: fc.array(matcher, { maxLength: 2 }), from: fc.option(fc.record({ i: fc.nat(), mask: fc.nat() }), { freq: 4, nil: undefined }) });
    const tier = new RedisHotTier(redisUrl());
    const raw = new Redis(redisUrl());
    try {
      await fc.assert(
        fc.asyncProperty(series, fc.array(fc.nat(), { maxLength: 10 }), fc.array(fc.nat(), { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 10 }), fc.array(selector, { minLength: 1, maxLength: 6 }), async (keys, released, old, again, selectors) => {
          const ref: ShardRef = { ns: uniqueNamespace(), shard: 0 };
          const p = `s4:{${ref.ns}:0}:`;
          const put = (k: SeriesKey, window: number, byte: number): HotAppend => ({ ref, window, id: seriesId(k), key: k, data: Uint8Array.from([byte]) });
          const oldOnes = new Set(old.map((i) => keys[i % keys.length]!));
          // Series whose logs an earlier version made: meta and metric set, no postings.
          for (const k of oldOnes) {
            await raw.zadd(`${p}windows`, 0, '0');
            await raw.hsetnx(`${p}w:0:meta`, seriesId(k), JSON.stringify(k));
            await raw.sadd(`${p}w:0:m:${k.metric}`, seriesId(k));
            await raw.append(`${p}w:0:log:${seriesId(k)}`, Buffer.from([9]));
          }
          // The earlier version's series are not in window H: found there, a series would be found in every window.
          await tier.append(keys.flatMap((k, i) => [put(k, 0, i), ...(oldOnes.has(k) ? [] : [put(k, H, i)])]));
          // Released whole in window 0, some of them written again after.
          const gone = new Set(released.map((i) => keys[i % keys.length]!));
          const lease = (await tier.acquireLease(ref, 'w', 10_000))!;
          await tier.release(lease, 0, [...gone].map((k) => ({ id: seriesId(k), length: oldOnes.has(k) ? 2 : 1 })));
          const back = new Set(again.map((i) => keys[i % keys.length]!));
          if (back.size > 0) await tier.append([...back].map((k) => put(k, 0, 200)));
          for (const given of selectors) {
            let s = given;
            if (given.from) {
              const k = keys[given.from.i % keys.length]!;
              const picked = Object.entries(k.tags).filter((_, j) => (given.from!.mask >> j) & 1);
              s = { ...given, metric: k.metric, tags: Object.fromEntries(picked) };
            }
            const sel = { tags: s.tags, matchers: s.matchers };
            const expected = keys
              .flatMap((k) => [...(!gone.has(k) || back.has(k) ? [[0, k]] : []), ...(oldOnes.has(k) ? [] : [[H, k]])] as [number, SeriesKey][])
              .filter(([, k]) => k.metric === s.metric && selects(sel, k.tags))
              .map(([w, k]) => `${w} ${seriesId(k)}`)
              .sort();
            const scan = await tier.scan(ref, s.metric, 0, 2 * H, sel);
            expect(scan.logs.map((l) => `${l.window} ${l.id}`).sort()).toEqual(expected);
          }
          // Window 0 released whole leaves no key of it behind.
          await tier.release(lease, 0, keys.map((k) => ({ id: seriesId(k), length: 3 })));
          expect((await raw.keys(`${p}w:0:*`)).sort()).toEqual([]);
        }),
        { numRuns: 25 },
      );
    } finally {
      raw.disconnect();
      await tier.close();
    }
  });
});
