import { describe, expect, it } from 'vitest';
import { MemoryCardinalityStore } from './cardinality.js';

const H = 3_600_000;
const T = Date.UTC(2026, 10, 27, 10, 0);
const refs = (metric: string, n: number) => Array.from({ length: n }, (_, i) => ({ metric, id: `${metric}-${i}` }));
const limits = { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, activeMs: H };

describe('memory cardinality store', () => {
  it('counts each metric right when metrics churn: a metric whose series all expired leaves its place to the next one', async () => {
    const store = new MemoryCardinalityStore();
    const active = async (now: number) => new Map((await store.usage('ns', H, now)).filter((u) => u.activeSeries > 0).map((u) => [u.metric, u.activeSeries]));
    await store.admit('ns', refs('a', 3), limits, T);
    await store.admit('ns', refs('b', 2), limits, T + H / 2);
    // a's series expire and are dropped (a sweep runs on this admit); c's series take their rows and a's metric number.
    expect(await store.admit('ns', refs('c', 4), limits, T + H + 1)).toEqual({ admitted: true, fresh: 4 });
    expect(await active(T + H + 1)).toEqual(new Map([['b', 2], ['c', 4]]));
    // a comes back: new again, counted apart from c.
    expect(await store.admit('ns', refs('a', 1), limits, T + H + 2)).toEqual({ admitted: true, fresh: 1 });
    expect(await active(T + H + 2)).toEqual(new Map([['a', 1], ['b', 2], ['c', 4]]));
    expect(await active(T + 2 * H)).toEqual(new Map([['a', 1], ['c', 4]]));
  });
});
