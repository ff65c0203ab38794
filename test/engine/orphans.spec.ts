import { describe, expect, it } from 'vitest';
import { segmentKey, type ObjectStore } from '@s4/core';
import { CatalogStore, Flusher, OrphanSweeper, QueryEngine, Writer, parseWrite } from '@s4/engine';
import { EmbeddedHotTier, FilesystemObjectStore } from '@s4/storage';
import { freshBucket, tempDir, uniqueNamespace } from '../support/servers.js';

const H0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;

/** Each object store: the sweeper lists, reads catalogs and deletes, so it runs against both. */
const stores: [string, () => Promise<ObjectStore>][] = [
  ['filesystem', async () => new FilesystemObjectStore(tempDir('orphans'))],
  ['s3', async () => (await freshBucket()).store],
];

describe.each(stores)('OrphanSweeper on %s', (_name, open) => {
  it('deletes parts a crashed flush never registered, after the grace period, and nothing else', async () => {
    const objects = await open();
    const hot = await EmbeddedHotTier.open({ dir: tempDir('orphans-hot'), fsync: 'never' });
    const ns = uniqueNamespace();
    let now = H0 + 2 * 3_600_000;
    const clock = { now: () => now };
    const opts = { ns, shards: 2 };
    const catalogs = new CatalogStore(objects);
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const samples = Array.from({ length: 200 }, (_, i) => ({ metric: 'm', tags: { s: String(i % 7) }, ts: H0 + i * 1000, fields: { v: i } }));
    await writer.write(parseWrite({ kind: 'json', body: { samples } }, { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 }, now));
    await new Flusher(hot, objects, catalogs, { ...opts, owner: 'w', leaseTtlMs: 60_000, clock }).flushAll(now);

    // What a flush killed between upload and registration leaves behind: a part no catalog names.
    const orphan = segmentKey({ ns, shard: 1 }, H0, 7, 99);
    await objects.put(orphan, Uint8Array.of(1, 2, 3));
    const sweeper = new OrphanSweeper(objects, catalogs, { ...opts, graceMs: 30 * MIN, clock });

    const first = await sweeper.sweep();
    expect(first.deleted).toBe(0);
    expect(first.pending).toBe(1);
    now += 10 * MIN;
    expect((await sweeper.sweep()).deleted).toBe(0); // still within the grace period
    expect(await objects.head(orphan)).not.toBeNull();
    now += 25 * MIN;
    const late = await sweeper.sweep();
    expect(late.deleted).toBe(1);
    expect(await objects.head(orphan)).toBeNull();

    // Every registered part survived, and the data reads back whole.
    const query = new QueryEngine(hot, objects, new CatalogStore(objects), { ...opts, concurrency: 4, cacheBytes: 1 << 20 });
    let n = 0;
    for await (const s of query.query({ metric: 'm', tags: {}, from: H0, to: H0 + 3_600_000 })) n += s.ts.length;
    expect(n).toBe(200);
    expect(late.parts).toBeGreaterThan(0);
    await hot.close();
    await objects.close();
  });

  it('spares a part that gets registered during its grace period', async () => {
    const objects = await open();
    const ns = uniqueNamespace();
    let now = H0;
    const clock = { now: () => now };
    const catalogs = new CatalogStore(objects);
    const key = segmentKey({ ns, shard: 0 }, H0, 1, 1);
    await objects.put(key, Uint8Array.of(1));
    const sweeper = new OrphanSweeper(objects, catalogs, { ns, shards: 1, graceMs: MIN, clock });
    expect((await sweeper.sweep()).pending).toBe(1);
    // The slow flush registers its part now (entry fields beyond the key do not matter here).
    await catalogs.add({ ns, shard: 0 }, { window: H0, part: 1, fence: 1, key, size: 1, footerOffset: 0, footerLength: 0, series: 0, samples: 0, minTs: H0, maxTs: H0, metrics: null, createdAt: now });
    now += 5 * MIN;
    const s = await sweeper.sweep();
    expect(s.deleted).toBe(0);
    expect(s.pending).toBe(0);
    expect(await objects.head(key)).not.toBeNull();
    await objects.close();
  });
});
