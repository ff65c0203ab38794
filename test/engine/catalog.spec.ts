import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  KEY_FOLDERS,
  PreconditionFailedError,
  allShards,
  catalogKey,
  folderPrefix,
  parseSegmentKey,
  segmentKey,
  type GetOptions,
  type GetResult,
  type ObjectInfo,
  type ObjectStore,
  type PutCondition,
} from '@s4/core';
import type { CatalogEntry } from '@s4/format';
import { CatalogStore, Flusher, QueryEngine, Writer, parseWrite, rebuildCatalogs } from '@s4/engine';
import { EmbeddedHotTier, FilesystemObjectStore } from '@s4/storage';
import { freshBucket, tempDir, uniqueNamespace } from '../support/servers.js';

const H = 3_600_000;
/** Late on a day, so the data spans two days and so two catalogs per shard. */
const H0 = Date.UTC(2026, 2, 10, 21);
const SHARDS = 3;
const LIMITS = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 9, maxTags: 9, maxTagLength: 99, maxFutureMs: 0, maxNestingDepth: 64 };

/** Each object store: rebuild lists and reads footers, and the compare-and-swap relies on the store's conditional puts. */
const stores: [string, () => Promise<ObjectStore>][] = [
  ['filesystem', async () => new FilesystemObjectStore(tempDir('catalog'))],
  ['s3', async () => (await freshBucket()).store],
];

/**
 * A fault injector around a real store: before a put of `key`, runs `interlude` once (another
 * writer's put slipping in between this writer's load and its put), then lets the put through to
 * the real store, which decides whether its condition still holds.
 */
class InterleavingStore implements ObjectStore {
  private interlude: { key: string; run: () => Promise<void> } | null = null;
  /** Puts the real store refused because another writer had changed the object. */
  conflicts = 0;

  constructor(private readonly inner: ObjectStore) {}

  beforeNextPutOf(key: string, run: () => Promise<void>): void {
    this.interlude = { key, run };
  }

  async put(key: string, body: Uint8Array, condition?: PutCondition): Promise<{ etag: string }> {
    const interlude = this.interlude;
    if (interlude?.key === key) {
      this.interlude = null;
      await interlude.run();
    }
    try {
      return await this.inner.put(key, body, condition);
    } catch (e) {
      if (e instanceof PreconditionFailedError) this.conflicts++;
      throw e;
    }
  }

  get(key: string, options?: GetOptions): Promise<GetResult | null> {
    return this.inner.get(key, options);
  }

  head(key: string): Promise<{ size: number; etag: string } | null> {
    return this.inner.head(key);
  }

  list(prefix: string): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix);
  }

  delete(keys: readonly string[]): Promise<void> {
    return this.inner.delete(keys);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Every series of metric `m` over the test's range, as plain arrays. */
async function answer(query: QueryEngine): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const s of query.query({ metric: 'm', tags: {}, from: H0 - H, to: H0 + 8 * H }))
    out.push({ tags: s.tags, ts: Array.from(s.ts), fields: Object.fromEntries(Object.entries(s.fields).map(([k, v]) => [k, Array.from(v as ArrayLike<unknown>)])) });
  return out;
}

function entry(ns: string, shard: number, window: number, part: number): CatalogEntry {
  const key = segmentKey({ ns, shard }, window, part, 1);
  return { window, part, fence: 1, key, size: 1, footerOffset: 0, footerLength: 0, series: 1, samples: 1, minTs: window, maxTs: window, metrics: ['m'], createdAt: window };
}

describe.each(stores)('catalogs on %s', (_name, open) => {
  it('rebuild after the catalogs are lost registers exactly the parts that exist, and queries answer as before', async () => {
    const objects = await open();
    const hot = await EmbeddedHotTier.open({ dir: tempDir('catalog-hot'), fsync: 'never' });
    const ns = uniqueNamespace();
    const now = H0 + 8 * H;
    const opts = { ns, shards: SHARDS };
    const writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 16 });
    const flusher = new Flusher(hot, objects, new CatalogStore(objects), { ...opts, owner: 'w', leaseTtlMs: 60_000, clock: { now: () => now } });
    // Six hours over two days, then late data for two of them: some windows have two parts.
    const samples = Array.from({ length: 600 }, (_, i) => ({ metric: 'm', tags: { s: String(i % 7) }, ts: H0 + i * 36_000, fields: { v: i } }));
    await writer.write(parseWrite({ kind: 'json', body: { samples } }, LIMITS, now));
    await flusher.flushAll(now);
    const late = Array.from({ length: 50 }, (_, i) => ({ metric: 'm', tags: { s: String(i % 5) }, ts: H0 + H + i * 60_000 + 500, fields: { v: -i } }));
    await writer.write(parseWrite({ kind: 'json', body: { samples: late } }, LIMITS, now));
    await flusher.flushAll(now);
    const query = () => new QueryEngine(hot, objects, new CatalogStore(objects), { ...opts, concurrency: 4, cacheBytes: 1 << 20 });
    const before = await answer(query());
    expect(before.reduce((n: number, s) => n + (s as { ts: unknown[] }).ts.length, 0)).toBe(650);

    const parts: string[] = [];
    for await (const o of objects.list(folderPrefix(ns, KEY_FOLDERS.segments))) if (parseSegmentKey(o.key)) parts.push(o.key);
    expect(parts.length).toBeGreaterThan(6);
    const registered = async (catalogs: CatalogStore) => {
      const keys: string[] = [];
      for (const shard of allShards(SHARDS)) for (const e of await catalogs.entries({ ns, shard }, 0, Number.MAX_SAFE_INTEGER, 0, H)) keys.push(e.key);
      return keys.sort();
    };
    const originals = await registered(new CatalogStore(objects));
    expect(originals).toEqual([...parts].sort());

    // Lose every catalog and day list: the parts are still there, but no query can find them.
    const catalogObjects: string[] = [];
    for await (const o of objects.list(folderPrefix(ns, KEY_FOLDERS.catalogs))) catalogObjects.push(o.key);
    expect(catalogObjects.length).toBeGreaterThanOrEqual(SHARDS * 2);
    await objects.delete(catalogObjects);
    expect(await answer(query())).toEqual([]);

    let rebuilt = 0;
    const catalogs = new CatalogStore(objects);
    for (const shard of allShards(SHARDS)) rebuilt += await rebuildCatalogs(objects, catalogs, { ns, shard }, now);
    expect(rebuilt).toBe(parts.length);
    expect(await registered(new CatalogStore(objects))).toEqual([...parts].sort());
    // Each part is registered in the catalog of its own day, with what a flush registered for it.
    for (const shard of allShards(SHARDS))
      for (const day of await new CatalogStore(objects).days({ ns, shard }, 0)) {
        const c = await new CatalogStore(objects).read({ ns, shard }, day, 0);
        for (const e of c.entries) expect(Math.floor(e.window / DAY_MS) * DAY_MS).toBe(day);
      }
    expect(await answer(query())).toEqual(before);
    await hot.close();
    await objects.close();
  });

  it.each([
    ['creates the catalog', false],
    ['updates the catalog', true],
  ])('add: two writers racing on one catalog both land, when the first %s', async (_case, existing) => {
    const real = await open();
    const faulty = new InterleavingStore(real);
    const ns = uniqueNamespace();
    const ref = { ns, shard: 0 };
    const first = new CatalogStore(faulty);
    const other = new CatalogStore(real);
    if (existing) await other.add(ref, entry(ns, 0, H0, 1));

    // The other writer's put lands after the first writer loaded the catalog and before its put.
    faulty.beforeNextPutOf(catalogKey(ref, H0 - (H0 % DAY_MS)), () => other.add(ref, entry(ns, 0, H0 + H, 1)));
    await first.add(ref, entry(ns, 0, H0 + 2 * H, 1));
    expect(faulty.conflicts).toBe(1); // the first put was refused: it would have dropped the other's entry

    const { catalog } = await new CatalogStore(real).load(ref, H0 - (H0 % DAY_MS));
    const want = [...(existing ? [entry(ns, 0, H0, 1)] : []), entry(ns, 0, H0 + H, 1), entry(ns, 0, H0 + 2 * H, 1)];
    expect([...catalog.entries].sort((a, b) => a.window - b.window)).toEqual(want);
    await real.close();
  });
});
