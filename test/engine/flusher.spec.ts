import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HotTier, ObjectStore } from '@s4/core';
import { CatalogStore, Flusher, QueryEngine, Writer, parseWrite } from '@s4/engine';
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
