import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { HotAppend, HotTier } from '@s4/core';
import { parseWriteSliced, releaseBody, type WriteBody } from './validate.js';
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

describe('Writer.encodeSliced / commit (the HTTP write path)', () => {
  it('holds nothing of the parsed request while the write waits for durability', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let durable!: () => void;
    const appended: HotAppend[][] = [];
    const hot = { append: (entries: readonly HotAppend[]) => (appended.push([...entries]), new Promise<void>((r) => (durable = r))) } as unknown as HotTier;
    const writer = new Writer(hot, { ns: 'n', shards: 4, maxRecordBytes: 1 << 16 });
    const now = Date.UTC(2026, 0, 1);
    const limits = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 100, maxTags: 32, maxTagLength: 1024, maxFutureMs: 60_000, maxNestingDepth: 64 };
    // As Ingest does it: parse, let go of the body, encode, then commit.
    const start = async () => {
      const body: WriteBody = { kind: 'json', body: JSON.parse(JSON.stringify({ series: Array.from({ length: 500 }, (_, i) => ({ metric: 'gc_probe', tags: { host: `h${i}` }, ts: [now - i], fields: { v: [i] } })) })) };
      const entry = new WeakRef((body.body as { series: object[] }).series[7]!);
      const series = await parseWriteSliced(body, limits, now, 10);
      releaseBody(body);
      const encoded = await writer.encodeSliced(series, 10);
      return { entry, columns: new WeakRef(series[7]!.ts), committed: writer.commit(encoded) };
    };
    const { entry, columns, committed } = await start();
    await new Promise((r) => setImmediate(r));
    gc();
    expect(appended[0]).toHaveLength(500);
    expect(entry.deref()).toBeUndefined();
    expect(columns.deref()).toBeUndefined();
    durable();
    await expect(committed).resolves.toMatchObject({ samples: 500, series: 500 });
  });
});
