import { describe, expect, it } from 'vitest';
import type { HotAppend, HotTier } from '@s4/core';
import { Writer } from './writer.js';

/** Records what the Writer hands the hot tier; nothing else of the port is used here. */
function recordingHotTier(): { hot: HotTier; calls: HotAppend[][] } {
  const calls: HotAppend[][] = [];
  const hot = { append: async (entries: readonly HotAppend[]) => void calls.push([...entries]) } as unknown as HotTier;
  return { hot, calls };
}

const a = (id: string, window: number, ...bytes: number[]): HotAppend => ({ ref: { ns: 'n', shard: 0 }, window, id, key: { metric: 'm', tags: { id } }, data: new Uint8Array(bytes) });

describe('Writer.appendEncoded (the ingest role)', () => {
  it('joins the bytes of one series-window in order, one append each, in chunks of at most 1,000', async () => {
    const { hot, calls } = recordingHotTier();
    const writer = new Writer(hot, { ns: 'n', shards: 1, maxRecordBytes: 1 << 16 });
    const appends: HotAppend[] = [];
    // 2,500 series, each written by three requests; one of them in two windows.
    for (let r = 0; r < 3; r++) for (let s = 0; s < 2_500; s++) appends.push(a(`s${s}`, 0, r, s % 256));
    appends.push(a('s7', 3_600_000, 9));
    await writer.appendEncoded(appends);
    expect(calls.map((c) => c.length)).toEqual([1_000, 1_000, 501]);
    const all = calls.flat();
    expect(all.find((x) => x.id === 's7' && x.window === 0)!.data).toEqual(new Uint8Array([0, 7, 1, 7, 2, 7]));
    expect(all.find((x) => x.id === 's7' && x.window === 3_600_000)!.data).toEqual(new Uint8Array([9]));
    expect(all.filter((x) => x.id === 's7')).toHaveLength(2);
  });
});
