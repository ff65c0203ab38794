import { describe, expect, it } from 'vitest';
import { DAY_MS, seriesIndexKey, type ObjectStore, type ShardRef } from '@s4/core';
import { SeriesIndexStore } from './series-index-store.js';

/** No object at all; every GET recorded, each answered after the test lets it (`release`). */
function store() {
  const gets: string[] = [];
  const waiting: (() => void)[] = [];
  const objects: ObjectStore = {
    put: async () => ({ etag: '' }),
    head: async () => null,
    list: async function* () {},
    delete: async () => undefined,
    close: async () => undefined,
    get: (key) => {
      gets.push(key);
      return new Promise((r) => waiting.push(() => r(null)));
    },
  };
  return { objects, gets, release: () => waiting.splice(0).forEach((f) => f()) };
}

const DAY = Date.UTC(2026, 10, 27);
const refs: ShardRef[] = [0, 1, 2].map((shard) => ({ ns: 'bench', shard }));
const clock = { now: () => DAY + 20 * 3_600_000 };

describe('SeriesIndexStore.prefetch', () => {
  it("starts every shard's index read at once, and the query's own reads share them", async () => {
    const s = store();
    const idx = new SeriesIndexStore(s.objects, 1 << 20, clock);
    idx.prefetch(refs, DAY + 19 * 3_600_000, DAY + 20 * 3_600_000);
    expect(s.gets).toEqual(refs.map((r) => seriesIndexKey(r, DAY)));
    const reads = refs.map((r) => idx.get(r, DAY));
    s.release();
    expect(await Promise.all(reads)).toEqual([null, null, null]);
    expect(s.gets).toHaveLength(3);
  });

  it('reads every day of a two-day range, and nothing ahead for a longer one', () => {
    const s = store();
    const idx = new SeriesIndexStore(s.objects, 1 << 20, clock);
    idx.prefetch(refs.slice(0, 1), DAY - 3_600_000, DAY + 3_600_000);
    expect(s.gets).toEqual([seriesIndexKey(refs[0]!, DAY - DAY_MS), seriesIndexKey(refs[0]!, DAY)]);
    idx.prefetch(refs.slice(1), DAY - 2 * DAY_MS, DAY + 3_600_000);
    expect(s.gets).toHaveLength(2);
  });
});
