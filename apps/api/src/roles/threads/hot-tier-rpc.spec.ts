import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseLostError, S4Error, UnavailableError, seriesId, type HotAppend, type SeriesKey, type ShardRef } from '@s4/core';
import { EmbeddedHotTier } from '@s4/storage';
import { HotTierClient, serveHotTier } from './hot-tier-rpc.js';
import { fromWire, toWire } from './wire.js';

const H = 3_600_000;

describe('hot-tier RPC (a thread reaching the main thread’s embedded hot tier)', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function connect() {
    const dir = mkdtempSync(join(tmpdir(), 's4-rpc-'));
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    const { port1, port2 } = new MessageChannel();
    const stop = serveHotTier(tier, port1);
    const client = new HotTierClient(port2);
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }), () => tier.close(), stop, () => client.close());
    return { tier, client, ref: { ns: 'rpc', shard: 1 } satisfies ShardRef };
  }
  const key = (i: number): SeriesKey => ({ metric: 'm', tags: { host: `h${i}`, constructor: 'c' } });
  const entry = (ref: ShardRef, i: number, bytes: Uint8Array): HotAppend => ({ ref, window: 0, id: seriesId(key(i)), key: key(i), data: bytes });

  it('reads a window of thousands of logs in parts, bytes and keys intact', async () => {
    const { tier, client, ref } = await connect();
    // Views into one large buffer, as request bodies are: each must arrive as its own bytes.
    const big = new Uint8Array(5000 * 8).map((_, i) => i % 251);
    await client.append(Array.from({ length: 2500 }, (_, i) => entry(ref, i, big.subarray(i * 8, i * 8 + 8))));
    await tier.append([entry(ref, 2500, new Uint8Array(5 * 1024 * 1024).fill(7))]); // one log larger than a part
    expect(await client.openWindows(ref)).toEqual([0]);
    const logs = await client.readWindow(ref, 0);
    const direct = await tier.readWindow(ref, 0);
    expect(logs.length).toBe(2501);
    expect(logs.map((l) => [l.id, l.window, Buffer.from(l.data).toString('hex')])).toEqual(direct.map((l) => [l.id, l.window, Buffer.from(l.data).toString('hex')]));
    expect(logs[3]!.key).toEqual(key(3));
    // The tier reads the window part by part for the RPC (the HTTP thread holds one part at a time).
    const parts: number[] = [];
    for await (const part of tier.readWindowParts(ref, 0, 1000, 4 * 1024 * 1024)) parts.push(part.length);
    // As the RPC packs them: a part holds more than one log only within the bytes of a part.
    expect(parts).toEqual([1000, 1000, 500, 1]);
    expect(await client.readWindow(ref, H)).toEqual([]);
    // User-named maps keep no prototype on this side too (a tag may be called `constructor`).
    expect(Object.getPrototypeOf(logs[3]!.key.tags)).toBeNull();
    const scan = await client.scan(ref, 'm', 0, H);
    expect(scan.generation).toBe(await tier.generation(ref));
    expect(scan.logs.length).toBe(2501);
    // The query's selector crosses too: only the series it picks come back.
    const picked = await client.scan(ref, 'm', 0, H, { tags: { constructor: 'c' }, matchers: [{ key: 'host', op: '=~', value: 'h(7|2500)' }] });
    expect(picked.logs.map((l) => l.key.tags.host).sort()).toEqual(['h2500', 'h7']);
    expect((await client.seriesIn(ref, 'm', 0, H)).length).toBe(2501);
    expect((await client.stats()).logs).toBe(2501);
    expect(await client.shardStats(ref)).toEqual({ bytes: 2500 * 8 + 5 * 1024 * 1024, logs: 2501 });
  });

  it('hands parts read from the log file over without a copy, bytes intact, and reads them again after', async () => {
    const { tier, client, ref } = await connect();
    // Records of 300 bytes or more live in the embedded tier's file, not its memory: parts of them own their buffer.
    const bytes = (i: number) => new Uint8Array(300 + (i % 7)).map((_, j) => (i * 31 + j) % 251);
    await client.append(Array.from({ length: 3000 }, (_, i) => entry(ref, i, bytes(i))));
    let owned = 0;
    for await (const part of tier.readWindowParts(ref, 0, 1000, 4 * 1024 * 1024)) if (part.owned && part.owned.byteLength === part.reduce((n, l) => n + l.data.byteLength, 0)) owned++;
    expect(owned).toBe(3);
    const hex = (logs: readonly { id: string; data: Uint8Array }[]) => logs.map((l) => [l.id, Buffer.from(l.data).toString('hex')]);
    const direct = hex(await tier.readWindow(ref, 0));
    expect(hex(await client.readWindow(ref, 0))).toEqual(direct);
    // The transferred buffers were the part's own: the tier's state reads the same bytes again.
    expect(hex(await client.readWindow(ref, 0))).toEqual(direct);
    expect(hex(await tier.readWindow(ref, 0))).toEqual(direct);
  });

  it('runs the lease protocol on the real tier, and LeaseLostError stays a LeaseLostError', async () => {
    const { tier, client, ref } = await connect();
    await client.append([entry(ref, 1, Uint8Array.of(1, 2, 3))]);
    const lease = await client.acquireLease(ref, 'thread', 60_000);
    expect(lease).not.toBeNull();
    expect(await tier.acquireLease(ref, 'someone-else', 60_000)).toBeNull();
    expect(await client.renewLease(lease!, 60_000)).toBe(true);
    const generation = await client.bumpGeneration(lease!);
    expect(await tier.generation(ref)).toBe(generation);
    await client.release(lease!, 0, [{ id: seriesId(key(1)), length: 3 }]);
    expect(await tier.openWindows(ref)).toEqual([]);
    await client.releaseLease(lease!);
    const stale = { ...lease!, fence: lease!.fence + 100 };
    const error = await client.bumpGeneration(stale).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(error).toBeInstanceOf(S4Error);
    expect((error as LeaseLostError).status).toBe(409);
    expect((error as LeaseLostError).code).toBe('lease_lost');
  });

  it('fails calls as unavailable once the channel is closed, and never closes the tier itself', async () => {
    const { tier, client, ref } = await connect();
    await client.close();
    await expect(client.generation(ref)).rejects.toBeInstanceOf(UnavailableError);
    expect(await tier.generation(ref)).toBe(0);
  });

  it('re-creates errors by name with their fields and cause', () => {
    const original = new UnavailableError('hot tier', 'redis is down', 7, 'timeout');
    Object.defineProperty(original, 'cause', { value: Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const back = fromWire(structuredClone(toWire(original)));
    expect(back).toBeInstanceOf(UnavailableError);
    expect(back.message).toBe(original.message);
    expect((back as UnavailableError).retryAfterSeconds).toBe(7);
    expect((back as UnavailableError).reason).toBe('timeout');
    expect((back as UnavailableError).details).toEqual(original.details);
    expect((back.cause as Error & { code: string }).code).toBe('ECONNREFUSED');
    const plain = fromWire(structuredClone(toWire(new TypeError('x'))));
    expect(plain.name).toBe('TypeError');
    expect(plain.stack).toContain('TypeError: x');
  });
});
