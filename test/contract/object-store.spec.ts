import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreconditionFailedError, type ObjectStore } from '@s4/core';
import { FilesystemObjectStore } from '@s4/storage';
import { freshBucket, tempDir } from '../support/servers.js';

const adapters: [string, () => Promise<ObjectStore>][] = [
  ['filesystem', async () => new FilesystemObjectStore(tempDir('objects'))],
  ['s3', async () => (await freshBucket()).store],
];

describe.each(adapters)('ObjectStore contract: %s', (_name, make) => {
  let store: ObjectStore;
  beforeAll(async () => {
    store = await make();
  });
  afterAll(async () => {
    await store.close();
  });

  const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

  it('stores and returns bytes exactly', async () => {
    const body = bytes(300_000);
    const { etag } = await store.put('v1/a/one.bin', body);
    const got = await store.get('v1/a/one.bin');
    expect(got?.notModified).toBe(false);
    if (got && !got.notModified) {
      expect(Buffer.from(got.body).equals(Buffer.from(body))).toBe(true);
      expect(got.size).toBe(body.length);
      expect(got.etag).toBe(etag);
    }
  });

  it('answers null for a missing key', async () => {
    expect(await store.get('v1/a/missing.bin')).toBeNull();
    expect(await store.head('v1/a/missing.bin')).toBeNull();
  });

  it('reads a byte range and reports the whole size', async () => {
    const body = bytes(1000, 7);
    await store.put('v1/a/range.bin', body);
    const got = await store.get('v1/a/range.bin', { range: { offset: 100, length: 50 } });
    if (!got || got.notModified) throw new Error('expected a body');
    expect([...got.body]).toEqual([...body.subarray(100, 150)]);
    expect(got.size).toBe(1000);
  });

  it('answers notModified while the etag matches', async () => {
    const { etag } = await store.put('v1/a/etag.bin', bytes(10));
    expect((await store.get('v1/a/etag.bin', { ifNoneMatch: etag }))?.notModified).toBe(true);
    await store.put('v1/a/etag.bin', bytes(11));
    expect((await store.get('v1/a/etag.bin', { ifNoneMatch: etag }))?.notModified).toBe(false);
  });

  it('writes if-none-match only once', async () => {
    await store.put('v1/a/once.bin', bytes(5), { ifNoneMatch: '*' });
    await expect(store.put('v1/a/once.bin', bytes(6), { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
  });

  it('writes if-match only over the expected version', async () => {
    const first = await store.put('v1/a/cas.bin', bytes(5));
    const second = await store.put('v1/a/cas.bin', bytes(6), { ifMatch: first.etag });
    await expect(store.put('v1/a/cas.bin', bytes(7), { ifMatch: first.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
    const got = await store.get('v1/a/cas.bin');
    expect(got && !got.notModified && got.etag).toBe(second.etag);
  });

  it('lets exactly one of many concurrent conditional writers win', async () => {
    const base = await store.put('v1/a/race.bin', bytes(1));
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.put('v1/a/race.bin', bytes(2, i), { ifMatch: base.etag })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('lists keys under a prefix in order, and deletes', async () => {
    const keys = ['v1/l/x/2.bin', 'v1/l/x/1.bin', 'v1/l/y/3.bin', 'v1/l2/4.bin'];
    for (const k of keys) await store.put(k, bytes(3));
    const listed: string[] = [];
    for await (const o of store.list('v1/l/')) listed.push(o.key);
    expect(listed).toEqual(['v1/l/x/1.bin', 'v1/l/x/2.bin', 'v1/l/y/3.bin']);
    await store.delete(['v1/l/x/1.bin', 'v1/l/y/3.bin']);
    const after: string[] = [];
    for await (const o of store.list('v1/l')) after.push(o.key);
    expect(after).toEqual(['v1/l/x/2.bin', 'v1/l2/4.bin']);
  });
});
