import { afterAll, describe, expect, it } from 'vitest';
import type { CardinalityStore } from '@s4/core';
import { MemoryCardinalityStore, RedisHotTier } from '@s4/storage';
import { redisUrl, uniqueNamespace } from '../support/servers.js';

const H = 3_600_000;
const MIN = 60_000;
const T = Date.UTC(2026, 10, 23, 10, 30);
const refs = (metric: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ metric, id: `${metric}-${from + i}` }));

const redis: RedisHotTier[] = [];
afterAll(async () => {
  for (const r of redis) await r.close();
});

const adapters: [string, () => CardinalityStore][] = [
  ['memory', () => new MemoryCardinalityStore()],
  [
    'redis',
    () => {
      const r = new RedisHotTier(redisUrl());
      redis.push(r);
      return r.cardinality();
    },
  ],
];

describe.each(adapters)('CardinalityStore contract: %s', (_name, open) => {
  it('admits all or nothing, counts only new series against the limits, and forgets series after activeMs', async () => {
    const store = open();
    const ns = uniqueNamespace();
    const limits = { maxActiveSeries: 10, maxNewSeriesPerMinute: undefined, activeMs: H };
    expect(await store.admit(ns, refs('a', 0, 8), limits, T)).toEqual({ admitted: true, fresh: 8 });
    // 8 active + 3 new > 10: refused, and none of the 3 recorded.
    expect(await store.admit(ns, [...refs('a', 0, 2), ...refs('b', 0, 3)], limits, T + 1)).toEqual({ admitted: false, limit: 'maxActiveSeries', max: 10, metric: 'b' });
    expect(await store.admit(ns, refs('b', 0, 2), limits, T + 2)).toEqual({ admitted: true, fresh: 2 });
    // Full: existing series keep writing, a new one is refused.
    expect(await store.admit(ns, refs('a', 0, 8), limits, T + 3)).toEqual({ admitted: true, fresh: 0 });
    expect((await store.admit(ns, refs('c', 0, 1), limits, T + 4)).admitted).toBe(false);
    // An hour after their last write the b series are no longer active; the a series were written at T + 3.
    expect(await store.admit(ns, refs('c', 0, 2), limits, T + 2 + H)).toEqual({ admitted: true, fresh: 2 });
  });

  it('counts a series as new again the moment it expires, and frees its place at once, whenever expired series are dropped', async () => {
    const store = open();
    const ns = uniqueNamespace();
    const limits = { maxActiveSeries: 4, maxNewSeriesPerMinute: undefined, activeMs: H };
    expect(await store.admit(ns, refs('a', 0, 4), limits, T)).toEqual({ admitted: true, fresh: 4 });
    // Half a minute later a0 and a1 again; an hour after the first write a2 and a3 have expired: a2 is new again, in a3's place.
    expect(await store.admit(ns, refs('a', 0, 2), limits, T + 30_000)).toEqual({ admitted: true, fresh: 0 });
    expect(await store.admit(ns, refs('a', 2, 3), limits, T + H + 1)).toEqual({ admitted: true, fresh: 1 });
    // 3 active: two more are refused; once a0 and a1 expire as well, they are admitted.
    expect((await store.admit(ns, refs('b', 0, 2), limits, T + H + 2)).admitted).toBe(false);
    expect(await store.admit(ns, refs('b', 0, 2), limits, T + H + 30_001)).toEqual({ admitted: true, fresh: 2 });
    const usage = (await store.usage(ns, H, T + H + 30_001)).sort((x, y) => (x.metric < y.metric ? -1 : 1));
    expect(usage.map((u) => [u.metric, u.activeSeries])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });

  it('admits one request of 100,000 new series (the script gets them as one argument list, not a spread)', async () => {
    const store = open();
    const ns = uniqueNamespace();
    const limits = { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, activeMs: H };
    expect(await store.admit(ns, refs('big', 0, 100_000), limits, T)).toEqual({ admitted: true, fresh: 100_000 });
    expect(await store.admit(ns, refs('big', 0, 100_000), limits, T + 1)).toEqual({ admitted: true, fresh: 0 });
  });

  it('limits new series per minute', async () => {
    const store = open();
    const ns = uniqueNamespace();
    const limits = { maxActiveSeries: undefined, maxNewSeriesPerMinute: 5, activeMs: H };
    const minute = Math.floor(T / MIN) * MIN;
    expect((await store.admit(ns, refs('a', 0, 5), limits, minute)).admitted).toBe(true);
    expect(await store.admit(ns, refs('a', 5, 6), limits, minute + 59_999)).toEqual({ admitted: false, limit: 'maxNewSeriesPerMinute', max: 5, metric: 'a' });
    expect((await store.admit(ns, refs('a', 5, 10), limits, minute + MIN)).admitted).toBe(true);
  });

  it('reports active series and samples per metric over the last hour and day, and requests over the last day', async () => {
    const store = open();
    const ns = uniqueNamespace();
    const limits = { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, activeMs: H };
    await store.admit(ns, [...refs('a', 0, 3), ...refs('b', 0, 1)], limits, T);
    await store.addSamples(ns, new Map([['a', 30], ['b', 1]]), T - 2 * H);
    await store.addSamples(ns, new Map([['a', 5]]), T - 30 * MIN);
    await store.addSamples(ns, new Map([['a', 7]]), T);
    await store.addSamples(ns, new Map([['a', 1000]]), T - 25 * H);
    const usage = (await store.usage(ns, H, T)).sort((x, y) => (x.metric < y.metric ? -1 : 1));
    expect(usage).toEqual([
      { metric: 'a', activeSeries: 3, samplesHour: 12, samplesDay: 42 },
      { metric: 'b', activeSeries: 1, samplesHour: 0, samplesDay: 1 },
    ]);
    await store.addRequests(ns, 3, 10, T - 2 * H);
    await store.addRequests(ns, 1, 1, T);
    await store.addRequests(ns, 100, 100, T - 25 * H);
    expect(await store.requests(ns, T)).toEqual({ put: 4, get: 11 });
  });
});
