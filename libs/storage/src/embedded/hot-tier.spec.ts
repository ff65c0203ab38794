import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError, seriesId, type HotAppend, type SeriesKey } from '@s4/core';
import { decodeWal, encodeWalRecord } from '@s4/format';
import { EmbeddedHotTier } from './hot-tier.js';

/**
 * A full disk, for real: a 2 MiB tmpfs (the suite runs as root, as `npm test` must to install
 * its servers). The log must refuse what it cannot store, acknowledge nothing it did not write
 * whole, and keep every acknowledged append readable after space comes back and the process dies.
 */
describe('embedded hot tier on a full disk', () => {
  const mnt = mkdtempSync(join(tmpdir(), 's4-full-'));
  beforeAll(() => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt]);
  });
  afterAll(() => {
    // Lazy: a failed test may leave a log file open on the mount.
    execFileSync('umount', ['-l', mnt]);
    rmSync(mnt, { recursive: true, force: true });
  });

  const key = (i: number): SeriesKey => ({ metric: 'm', tags: { s: String(i) } });
  const append = (i: number, bytes: number): HotAppend => ({
    ref: { ns: 'default', shard: i % 4 },
    window: 0,
    id: seriesId(key(i)),
    key: key(i),
    // Every byte says which append it belongs to, so a lost or torn append cannot hide.
    data: new Uint8Array(bytes).fill(i % 251),
  });

  it('loses no acknowledged append across ENOSPC, freed space and a crash', async () => {
    const dir = join(mnt, 'hot');
    const filler = join(mnt, 'filler');
    writeFileSync(filler, Buffer.alloc(1024 * 1024));
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'always' });
    const acked: number[] = [];
    let refused = 0;
    // Appends of odd sizes, so one of them lands across the last free page and is written short;
    // four at a time, so commits are written as groups (one writev) as well as alone.
    for (let i = 0; i < 400; i += 4) {
      const results = await Promise.allSettled([0, 1, 2, 3].map((j) => tier.append([append(i + j, 3_000 + ((i + j) % 7) * 1_111)])));
      results.forEach((r, j) => {
        if (r.status === 'fulfilled') acked.push(i + j);
        else {
          expect(r.reason).toBeInstanceOf(UnavailableError);
          expect((r.reason as UnavailableError).status).toBe(503);
          expect((r.reason as Error).message).toMatch(/full/);
          refused++;
        }
      });
    }
    expect(refused).toBeGreaterThan(0);
    const sizeWhenFull = statSync(join(dir, 'hot.wal')).size;
    rmSync(filler);
    for (let i = 400; i < 500; i++) {
      await tier.append([append(i, 3_000)]);
      acked.push(i);
    }
    expect(statSync(join(dir, 'hot.wal')).size).toBeGreaterThan(sizeWhenFull);
    // No close(): the process "dies" here, and a new one replays the log.
    const after = await EmbeddedHotTier.open({ dir, fsync: 'always' });
    const found = new Map<string, Uint8Array>();
    for (let shard = 0; shard < 4; shard++) for (const log of await after.readWindow({ ns: 'default', shard }, 0)) found.set(log.id, log.data);
    for (const i of acked) {
      const data = found.get(seriesId(key(i)));
      expect(data, `acknowledged append ${i}`).toBeDefined();
      expect(data!.every((b) => b === i % 251)).toBe(true);
    }
    expect(found.size).toBe(acked.length);
    await after.close();
    await tier.close();
  });

  it('refuses a scraper round that meets a full disk with 503, and nothing else (no unhandled rejection ends the process)', async () => {
    const dir = join(mnt, 'round');
    const filler = join(mnt, 'filler-round');
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'always' });
    const free = statfsSync(mnt);
    writeFileSync(filler, Buffer.alloc(Math.max(0, free.bavail * free.bsize - 64 * 1024))); // 64 KiB left
    // Node ends a process on a rejection left without a handler for a turn of the event loop.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Many commits of one call (a round of 100,000 series): the first fails while later ones are still being made.
      const round = Array.from({ length: 100_000 }, (_, i) => append(10_000 + i, 16));
      const outcome = await tier.append(round).then(
        () => null,
        (e: unknown) => e,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(outcome).toBeInstanceOf(UnavailableError);
      expect((outcome as Error).message).toMatch(/full/);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      rmSync(filler);
      await tier.close();
    }
  });
});

describe('embedded hot tier: one series, many appends and windows', () => {
  it('keeps every append in order across growth, partial releases and a replay, and holds one key per series', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-'));
    const ref = { ns: 'default', shard: 0 };
    const k = { metric: 'cpu', tags: { host: 'h1', dc: 'eu' } };
    const id = seriesId(k);
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    const expected = new Map<number, number[]>([[0, []], [3_600_000, []]]);
    for (let i = 0; i < 300; i++) {
      const window = i % 3 === 0 ? 3_600_000 : 0;
      const data = Array.from({ length: 1 + (i % 5) }, (_, j) => (i * 7 + j) % 256);
      expected.get(window)!.push(...data);
      // A fresh key object per append, as the writer makes them.
      await tier.append([{ ref, window, id, key: { metric: 'cpu', tags: { host: 'h1', dc: 'eu' } }, data: Uint8Array.from(data) }]);
    }
    const read = async (t: EmbeddedHotTier, window: number) => (await t.readWindow(ref, window))[0]!;
    const [a, b] = [await read(tier, 0), await read(tier, 3_600_000)];
    expect([...a.data]).toEqual(expected.get(0));
    expect([...b.data]).toEqual(expected.get(3_600_000));
    expect(a.key).toBe(b.key); // held once, shared by the windows' logs
    expect(a.key).toEqual(k);

    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    await tier.release(lease, 0, [{ id, length: 10 }]);
    await tier.append([{ ref, window: 0, id, key: k, data: Uint8Array.of(1, 2, 3) }]);
    expect([...(await read(tier, 0)).data]).toEqual([...expected.get(0)!.slice(10), 1, 2, 3]);
    // The whole of the other window released: its series stays known through window 0.
    await tier.release(lease, 3_600_000, [{ id, length: b.data.length }]);
    expect(await tier.readWindow(ref, 3_600_000)).toEqual([]);
    expect(await tier.seriesIn(ref, 'cpu', 0, 2 * 3_600_000)).toEqual([k]);

    await tier.close();
    const again = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    expect([...(await read(again, 0)).data]).toEqual([...expected.get(0)!.slice(10), 1, 2, 3]);
    expect((await read(again, 0)).key).toEqual(k);
    expect(await again.openWindows(ref)).toEqual([0]);
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('embedded hot tier: log versions and large writes', () => {
  it('replays a version-1 log, appends to it in version 2, and replays both; a write larger than one commit is whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-'));
    const key = (i: number): SeriesKey => ({ metric: 'm', tags: { s: String(i) } });
    const ref = (i: number) => ({ ns: i % 2 ? 'a' : 'b', shard: i % 3 });
    // A log as version 1 wrote it: one type-1 record per append.
    writeFileSync(
      join(dir, 'hot.wal'),
      Buffer.concat(Array.from({ length: 50 }, (_, i) => encodeWalRecord({ type: 'append', ...ref(i), window: 0, id: seriesId(key(i)), key: JSON.stringify(key(i)), data: Uint8Array.of(i) }))),
    );
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    // 10,000 appends in one call: more than one `appends` record, applied in slices.
    const big = Array.from({ length: 10_000 }, (_, j) => ({ ref: ref(j % 70), window: 0, id: seriesId(key(j % 70)), key: key(j % 70), data: Uint8Array.of(j % 251, 200) }));
    await tier.append(big);
    const expected = new Map<string, number[]>();
    for (let i = 0; i < 50; i++) expected.set(seriesId(key(i)), [i]);
    for (const [j, e] of big.entries()) {
      const list = expected.get(e.id) ?? [];
      list.push(j % 251, 200);
      expected.set(e.id, list);
    }
    const read = async (t: EmbeddedHotTier) => {
      const out = new Map<string, number[]>();
      for (const ns of ['a', 'b']) for (let shard = 0; shard < 3; shard++) for (const log of await t.readWindow({ ns, shard }, 0)) out.set(log.id, [...log.data]);
      return out;
    };
    expect(await read(tier)).toEqual(expected);
    await tier.close();
    const bytes = readFileSync(join(dir, 'hot.wal'));
    expect(decodeWal(bytes).records.filter((r) => r.type === 'appends').length).toBeGreaterThan(1);
    const again = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    expect(await read(again)).toEqual(expected);
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('embedded hot tier: releases (log version 3)', () => {
  it('replays version-2 release records, logs the releases of a flush as one frame, and rewrites live logs as appends records', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-'));
    const ref = { ns: 'default', shard: 1 };
    const key = (i: number): SeriesKey => ({ metric: 'm', tags: { s: String(i) } });
    const id = (i: number) => seriesId(key(i));
    // Version 2 wrote one type-2 record per released log.
    writeFileSync(
      join(dir, 'hot.wal'),
      Buffer.concat([
        encodeWalRecord({ type: 'appends', entries: [0, 1, 2, 3].map((i) => ({ ...ref, window: 0, id: id(i), key: JSON.stringify(key(i)), data: Uint8Array.of(i, i, i, i) })) }),
        encodeWalRecord({ type: 'release', ...ref, window: 0, id: id(0), length: 4 }),
        encodeWalRecord({ type: 'release', ...ref, window: 0, id: id(1), length: 1 }),
      ]),
    );
    const options = { dir, fsync: 'never' as const, compactSlackBytes: 0, now: () => 0 };
    const state = async (t: EmbeddedHotTier) => new Map((await t.readWindow(ref, 0)).map((l) => [l.id, [...l.data]]));
    const tier = await EmbeddedHotTier.open(options);
    expect(await state(tier)).toEqual(new Map([[id(1), [1, 1, 1]], [id(2), [2, 2, 2, 2]], [id(3), [3, 3, 3, 3]]]));
    const before = statSync(join(dir, 'hot.wal')).size;
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    await tier.release(lease, 0, [
      { id: id(1), length: 3 },
      { id: id(2), length: 2 },
      { id: 'not-held', length: 9 },
    ]);
    await tier.append([{ ref, window: 0, id: id(3), key: key(3), data: Uint8Array.of(4) }]);
    const expected = new Map([[id(2), [2, 2]], [id(3), [3, 3, 3, 3, 4]]]);
    expect(await state(tier)).toEqual(expected);
    await tier.close();
    const records = decodeWal(readFileSync(join(dir, 'hot.wal'))).records;
    // Released bytes outweigh live ones (compactSlackBytes 0): the file was rewritten, live logs as `appends` records.
    expect(statSync(join(dir, 'hot.wal')).size).toBeLessThan(before + 200);
    expect(records.filter((r) => r.type === 'append' || r.type === 'release')).toEqual([]);
    const again = await EmbeddedHotTier.open(options);
    expect(await state(again)).toEqual(expected);
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs the releases of one call as one `releases` record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-'));
    const ref = { ns: 'default', shard: 0 };
    const key = (i: number): SeriesKey => ({ metric: 'm', tags: { s: String(i) } });
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    await tier.append(Array.from({ length: 100 }, (_, i) => ({ ref, window: 0, id: seriesId(key(i)), key: key(i), data: Uint8Array.of(i, i) })));
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    await tier.release(lease, 0, Array.from({ length: 100 }, (_, i) => ({ id: seriesId(key(i)), length: i % 2 ? 2 : 1 })));
    await tier.close();
    const releases = decodeWal(readFileSync(join(dir, 'hot.wal'))).records.filter((r) => r.type === 'releases' || r.type === 'release');
    expect(releases.map((r) => [r.type, r.type === 'releases' ? r.cursors.length : 1])).toEqual([['releases', 100]]);
    const again = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    expect(new Map((await again.readWindow(ref, 0)).map((l) => [l.id, [...l.data]]))).toEqual(new Map(Array.from({ length: 50 }, (_, j) => [seriesId(key(2 * j)), [2 * j]])));
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('embedded hot tier: replay in pieces', () => {
  it('rebuilds the same state from pieces smaller than a record, cuts a torn tail, and stops at a corrupt record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-'));
    const key = (i: number): SeriesKey => ({ metric: 'm', tags: { s: String(i) } });
    const ref = { ns: 'default', shard: 0 };
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    // Records of very different sizes: some far larger than a piece, many smaller.
    for (let i = 0; i < 60; i++) await tier.append([{ ref, window: 0, id: seriesId(key(i % 9)), key: key(i % 9), data: new Uint8Array(i % 7 === 0 ? 5_000 + i : 1 + i).fill(i) }]);
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    await tier.release(lease, 0, [{ id: seriesId(key(3)), length: 20 }]);
    await tier.close();
    const read = async (t: EmbeddedHotTier) => new Map((await t.readWindow(ref, 0)).map((l) => [l.id, [...l.data]]));
    const whole = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    const want = await read(whole);
    await whole.close();
    expect(want.size).toBe(9);
    for (const piece of [1, 7, 64, 1_000, 4_096]) {
      const t = await EmbeddedHotTier.open({ dir, fsync: 'never', replayChunkBytes: piece });
      expect(await read(t), `pieces of ${piece} bytes`).toEqual(want);
      await t.close();
    }

    // A torn tail (half a record): dropped, the file cut back to the last whole record.
    const path = join(dir, 'hot.wal');
    const intact = readFileSync(path);
    const extra = encodeWalRecord({ type: 'append', ...ref, window: 0, id: seriesId(key(1)), key: JSON.stringify(key(1)), data: new Uint8Array(3_000).fill(7) });
    writeFileSync(path, Buffer.concat([intact, extra.subarray(0, 1_500)]));
    const torn = await EmbeddedHotTier.open({ dir, fsync: 'never', replayChunkBytes: 1_000 });
    expect(await read(torn)).toEqual(want);
    await torn.close();
    expect(statSync(path).size).toBe(intact.length);

    // A whole record that fails its check ends the log there, even with intact records after it.
    const bad = Buffer.from(extra);
    bad[bad.length - 1]! ^= 0xff;
    writeFileSync(path, Buffer.concat([intact, bad, extra]));
    const corrupt = await EmbeddedHotTier.open({ dir, fsync: 'never', replayChunkBytes: 1_000 });
    expect(await read(corrupt)).toEqual(want);
    await corrupt.close();
    expect(statSync(path).size).toBe(intact.length);
    rmSync(dir, { recursive: true, force: true });
  });
});

/**
 * Logs whose appends are large keep their bytes in the log file (positional reads), small ones in
 * memory. Whatever the mix, a window read returns exactly the bytes appended and not released,
 * across partial releases, rewrites of the log (offsets move) and replays, whole or in pieces.
 */
describe('embedded hot tier: logs kept in the file', () => {
  const key = (i: number): SeriesKey => ({ metric: 'rec', tags: { m: String(i) } });
  const ref = { ns: 'default', shard: 0 };
  type Step = { kind: 'append'; series: number; window: number; size: number; fill: number; object: number; hint: number | undefined } | { kind: 'release'; series: number; also: number; window: number; part: number };
  // Hints (HotAppend.hint) from a range smaller than the series: one number names one series, then
  // another (the write path gives a forgotten series' mark to the next), or none at all.
  const hint = fc.option(fc.nat(2), { nil: undefined });
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), series: fc.nat(4), window: fc.constantFrom(0, 3_600_000), size: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 256, max: 3_000 })), fill: fc.nat(255), object: fc.nat(2), hint }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), series: fc.nat(4), also: fc.nat(4), window: fc.constantFrom(0, 3_600_000), part: fc.oneof(fc.constant(1_000), fc.integer({ min: 0, max: 1_000 })) }) },
  );
  const state = async (t: EmbeddedHotTier) => {
    const out = new Map<string, number[]>();
    for (const w of [0, 3_600_000]) for (const log of await t.readWindow(ref, w)) out.set(`${w}/${log.id}`, [...log.data]);
    return out;
  };

  it('reads back exactly the live bytes after releases, rewrites and replays', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 5_000 }), async (steps, piece) => {
        const dir = mkdtempSync(join(tmpdir(), 's4-hot-disk-'));
        // compactSlackBytes 0: the log is rewritten as soon as released bytes outweigh live ones.
        const options = { dir, fsync: 'never' as const, compactSlackBytes: 0, now: () => 0 };
        const tier = await EmbeddedHotTier.open(options);
        const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
        const model = new Map<string, number[]>();
        // The writer hands the same key object for a series on every request (the tier keeps its
        // last log by that object); its two identity caches may each hold another (object 0 or 1),
        // and after they turned over a new one comes (object 2).
        const keys = new Map<string, SeriesKey>();
        let n = 0;
        for (const s of steps) {
          const k = `${s.window}/${seriesId(key(s.series))}`;
          if (s.kind === 'append') {
            // Each append's bytes differ from its neighbours', so a piece read from a wrong offset shows.
            const data = Uint8Array.from({ length: s.size }, (_, j) => (s.fill + j + n) % 256);
            n++;
            const which = `${s.series}/${s.object}`;
            if (s.object === 2 || !keys.has(which)) keys.set(which, key(s.series));
            await tier.append([{ ref, window: s.window, id: seriesId(key(s.series)), key: keys.get(which)!, data, hint: s.hint }]);
            model.set(k, [...(model.get(k) ?? []), ...data]);
          } else {
            // One release call for one or two series, as a flush releases a window's logs together.
            const cursors: { id: string; length: number }[] = [];
            for (const series of new Set([s.series, s.also])) {
              const at = `${s.window}/${seriesId(key(series))}`;
              const have = model.get(at);
              if (!have) continue;
              const length = Math.floor((have.length * s.part) / 1_000);
              cursors.push({ id: seriesId(key(series)), length });
              if (length >= have.length) model.delete(at);
              else model.set(at, have.slice(length));
            }
            await tier.release(lease, s.window, cursors);
          }
          expect(await state(tier)).toEqual(model);
          expect((await tier.stats()).bytes).toBe([...model.values()].reduce((sum, bytes) => sum + bytes.length, 0));
        }
        await tier.close();
        const again = await EmbeddedHotTier.open(options);
        expect(await state(again)).toEqual(model);
        await again.close();
        const pieces = await EmbeddedHotTier.open({ ...options, replayChunkBytes: piece });
        expect(await state(pieces)).toEqual(model);
        await pieces.close();
        rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: 40 },
    );
  });

  it('appends to a new log after the old one was released whole, whichever key object named the series before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-disk-'));
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    const id = seriesId(key(1));
    const [a, b] = [key(1), key(1)];
    const put = (k: SeriesKey, ...data: number[]) => tier.append([{ ref, window: 0, id, key: k, data: Uint8Array.from(data) }]);
    await put(a, 1);
    await put(b, 2);
    await tier.release(lease, 0, [{ id, length: 2 }]);
    await put(a, 3);
    await put(b, 4);
    expect(await state(tier)).toEqual(new Map([[`0/${id}`, [3, 4]]]));
    await tier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays a log cut inside its last append: the appends before it, read from the file, exactly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-disk-'));
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    const want = new Map<string, number[]>();
    for (let i = 0; i < 30; i++) {
      const data = new Uint8Array(300 + i * 37).fill(i);
      await tier.append([{ ref, window: 0, id: seriesId(key(i % 3)), key: key(i % 3), data }]);
      if (i < 29) want.set(`0/${seriesId(key(i % 3))}`, [...(want.get(`0/${seriesId(key(i % 3))}`) ?? []), ...data]);
    }
    await tier.close();
    const path = join(dir, 'hot.wal');
    const bytes = readFileSync(path);
    // Cut in the middle of the last append's data.
    writeFileSync(path, bytes.subarray(0, bytes.length - 200));
    const after = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    expect(await state(after)).toEqual(want);
    // Appends after the cut land where the torn record was, and read back as written.
    const more = new Uint8Array(1_000).fill(99);
    await after.append([{ ref, window: 0, id: seriesId(key(0)), key: key(0), data: more }]);
    want.set(`0/${seriesId(key(0))}`, [...want.get(`0/${seriesId(key(0))}`)!, ...more]);
    expect(await state(after)).toEqual(want);
    await after.close();
    const last = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    expect(await state(last)).toEqual(want);
    await last.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a scan reads its logs when asked, as they were when it was taken, even after releases and a rewrite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-disk-'));
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', compactSlackBytes: 0 });
    const a = new Uint8Array(2_000).map((_, j) => j % 251);
    const b = new Uint8Array(3_000).fill(9);
    await tier.append([{ ref, window: 0, id: seriesId(key(1)), key: key(1), data: a }]);
    await tier.append([{ ref, window: 0, id: seriesId(key(2)), key: key(2), data: b }]);
    const scan = await tier.scan(ref, 'rec', 0, 3_600_000);
    // Most of the file released, then an append: the log is rewritten and key(1)'s bytes move.
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    await tier.release(lease, 0, [{ id: seriesId(key(2)), length: b.length }]);
    await tier.release(lease, 0, [{ id: seriesId(key(1)), length: 500 }]);
    await tier.append([{ ref, window: 0, id: seriesId(key(1)), key: key(1), data: new Uint8Array(700).fill(3) }]);
    expect(statSync(join(dir, 'hot.wal')).size).toBeLessThan(a.length + b.length);
    const byId = new Map(scan.logs.map((l) => [l.id, [...l.data]]));
    expect(byId.get(seriesId(key(1)))).toEqual([...a]);
    expect(byId.get(seriesId(key(2)))).toEqual([...b]);
    const now = new Map((await tier.scan(ref, 'rec', 0, 3_600_000)).logs.map((l) => [l.id, [...l.data]]));
    expect(now).toEqual(new Map([[seriesId(key(1)), [...a.subarray(500), ...new Array(700).fill(3)]]]));
    await tier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps large appends in the file, not in memory: its bytes are what a read returns', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-disk-'));
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never' });
    const data = new Uint8Array(1_000).fill(5);
    await tier.append([{ ref, window: 0, id: seriesId(key(1)), key: key(1), data }]);
    await tier.append([{ ref, window: 0, id: seriesId(key(2)), key: key(2), data: Uint8Array.of(1, 2, 3) }]);
    // The bytes changed under the tier (never done outside this test): the large log reads them, the small one does not.
    const path = join(dir, 'hot.wal');
    const bytes = readFileSync(path);
    const at = bytes.indexOf(Buffer.from(data));
    bytes.fill(6, at, at + data.length);
    writeFileSync(path, bytes);
    const logs = new Map((await tier.readWindow(ref, 0)).map((l) => [l.id, [...l.data]]));
    expect(logs.get(seriesId(key(1)))).toEqual(new Array(1_000).fill(6));
    expect(logs.get(seriesId(key(2)))).toEqual([1, 2, 3]);
    await tier.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

/**
 * In-memory logs live in a shard-window's block pool (blocks.ts), whose blocks are never written
 * again once released: a scan taken before releases and a log rewrite (which moves a mostly
 * released window's live logs to a fresh pool) still reads the bytes as they were.
 */
describe('embedded hot tier: block pools', () => {
  it('keeps a read taken before releases and a rewrite exact, and the live logs exact after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-pool-'));
    const ref = { ns: 'default', shard: 0 };
    const options = { dir, fsync: 'never' as const, compactSlackBytes: 0, now: () => 0 };
    const tier = await EmbeddedHotTier.open(options);
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    const key = (i: number): SeriesKey => ({ metric: 'm', tags: { h: String(i) } });
    const bytes = (i: number, round: number) => Uint8Array.from({ length: 100 }, (_, j) => (i * 7 + j + round) % 256);
    const series = 6_000;
    for (let round = 0; round < 2; round++)
      await tier.append(Array.from({ length: series }, (_, i) => ({ ref, window: 0, id: seriesId(key(i)), key: key(i), data: bytes(i, round) })));
    const want = (i: number) => [...bytes(i, 0), ...bytes(i, 1)];
    const before = (await tier.scan(ref, 'm', 0, 3_600_000)).logs;
    expect(before).toHaveLength(series);
    // All but series 0 released whole, series 0 by half: released blocks are most of the pool, and the log is rewritten.
    await tier.release(lease, 0, [{ id: seriesId(key(0)), length: 100 }, ...Array.from({ length: series - 1 }, (_, i) => ({ id: seriesId(key(i + 1)), length: 200 }))]);
    await tier.append([{ ref, window: 0, id: seriesId(key(0)), key: key(0), data: bytes(0, 2) }]);
    for (const log of before) expect([...log.data]).toEqual(want(Number(log.key.tags.h)));
    const after = await tier.readWindow(ref, 0);
    expect(after.map((l) => [...l.data])).toEqual([[...bytes(0, 1), ...bytes(0, 2)]]);
    expect((await tier.stats()).bytes).toBe(200);
    await tier.close();
    const again = await EmbeddedHotTier.open(options);
    expect((await again.readWindow(ref, 0)).map((l) => [...l.data])).toEqual([[...bytes(0, 1), ...bytes(0, 2)]]);
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('embedded hot tier: series handles', () => {
  it("never appends to another series' log when a release lets a handle go, and another series takes it, between an append's encoding and its apply", async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-handles-'));
    const ref = { ns: 'default', shard: 0 };
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    const a: SeriesKey = { metric: 'm', tags: { h: 'a' } };
    const b: SeriesKey = { metric: 'm', tags: { h: 'b' } };
    // Both with one hint (HotAppend.hint), as when a's mark went to b: the hint's handle is checked, never trusted.
    const put = (k: SeriesKey, window: number, ...data: number[]) => tier.append([{ ref, window, id: seriesId(k), key: k, data: Uint8Array.from(data), hint: 7 }]);
    await put(a, 0, 1, 2);
    // In one group commit, applied in this order: a's only log released whole (its handle let go),
    // b made (the free handle is a's), then a appended, its handle taken before any of it applied.
    const release = tier.release(lease, 0, [{ id: seriesId(a), length: 2 }]);
    const appendB = put(b, 0, 7);
    const appendA = put(a, 0, 3);
    await Promise.all([release, appendB, appendA]);
    const read = async (t: EmbeddedHotTier) => new Map((await t.readWindow(ref, 0)).map((l) => [l.key.tags.h, [...l.data]]));
    expect(await read(tier)).toEqual(new Map([['a', [3]], ['b', [7]]]));
    // Both series go on to their own logs, and a window of each.
    await put(a, 0, 4);
    await put(b, 0, 8);
    await put(a, 3_600_000, 5);
    expect(await read(tier)).toEqual(new Map([['a', [3, 4]], ['b', [7, 8]]]));
    expect((await tier.scan(ref, 'm', 0, 2 * 3_600_000)).logs.map((l) => `${l.key.tags.h}@${l.window}:${[...l.data]}`).sort()).toEqual(['a@0:3,4', 'a@3600000:5', 'b@0:7,8']);
    await tier.close();
    const again = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    expect(await read(again)).toEqual(new Map([['a', [3, 4]], ['b', [7, 8]]]));
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a window whole and exact while releases between its turns let rows go to other series', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-rows-'));
    const ref = { ns: 'default', shard: 0 };
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    const key = (i: number): SeriesKey => ({ metric: 'm', tags: { h: String(i) } });
    const bytes = (i: number) => Uint8Array.from({ length: 30 }, (_, j) => (i * 13 + j) % 256);
    const n = 20_000;
    await tier.append(Array.from({ length: n }, (_, i) => ({ ref, window: 0, id: seriesId(key(i)), key: key(i), data: bytes(i) })));
    const reading = tier.readWindow(ref, 0);
    // Meanwhile: every series released whole, and as many new ones written (rows and handles reused).
    await tier.release(lease, 0, Array.from({ length: n }, (_, i) => ({ id: seriesId(key(i)), length: 30 })));
    await tier.append(Array.from({ length: n }, (_, i) => ({ ref, window: 0, id: seriesId(key(n + i)), key: key(n + i), data: bytes(n + i) })));
    const logs = await reading;
    expect(logs).toHaveLength(n);
    for (const l of logs) expect([...l.data]).toEqual([...bytes(Number(l.key.tags.h))]);
    expect(new Set(logs.map((l) => l.key.tags.h)).size).toBe(n);
    // Once more each: the appends go through the series' logged parts kept since (their arena
    // repacked when the released series' parts were most of it), which a replay reads back.
    await tier.append(Array.from({ length: n }, (_, i) => ({ ref, window: 0, id: seriesId(key(n + i)), key: key(n + i), data: bytes(n + i) })));
    const twice = (i: number) => [...bytes(i), ...bytes(i)];
    const check = async (t: EmbeddedHotTier) => {
      const after = await t.readWindow(ref, 0);
      expect(after.map((l) => Number(l.key.tags.h)).sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => n + i));
      for (const l of after) {
        expect(l.id).toBe(seriesId(l.key));
        expect([...l.data]).toEqual(twice(Number(l.key.tags.h)));
      }
    };
    await check(tier);
    await tier.close();
    const again = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    await check(again);
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('embedded hot tier: scans by tag', () => {
  // The scan answers a selector with a tag equality from the series table's postings when they
  // are shorter than the metric's logs: it must pick exactly what testing every log would, while
  // handles are let go and taken again (lists hold stale and repeated handles until swept).
  const metric = fc.constantFrom('m', 'n');
  const tags = fc.record({ h: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), d: fc.constantFrom('x', 'y') }, { requiredKeys: ['h'] });
  const op = fc.oneof(
    fc.record({ type: fc.constant('append' as const), metric, tags, window: fc.constantFrom(0, 3_600_000), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ type: fc.constant('release' as const), metric, tags, window: fc.constantFrom(0, 3_600_000) }),
  );
  const selector = fc.record({
    metric,
    tags: fc.record({ h: fc.constantFrom('a', 'b', 'c', 'z'), d: fc.constantFrom('x', 'y') }, { requiredKeys: [] }),
    matchers: fc.constantFrom(undefined, [{ key: 'd', op: '!=' as const, value: 'x' }], [{ key: 'h', op: '=~' as const, value: '[ab]' }]),
  });

  it('answers a series once when its handle is listed twice (let go, then taken again by the same series)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-hot-postings-'));
    const ref = { ns: 'default', shard: 0 };
    const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
    const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
    const put = (key: SeriesKey, byte: number) => tier.append([{ ref, window: 0, id: seriesId(key), key, data: Uint8Array.of(byte) }]);
    for (const h of ['b', 'c', 'd']) await put({ metric: 'm', tags: { h } }, 9);
    const a: SeriesKey = { metric: 'm', tags: { h: 'a' } };
    await put(a, 1);
    await tier.release(lease, 0, [{ id: seriesId(a), length: 1 }]);
    await put(a, 2);
    expect((await tier.scan(ref, 'm', 0, 3_600_000, { tags: { h: 'a' } })).logs.map((l) => [...l.data])).toEqual([[2]]);
    await tier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('picks what testing every log of the metric picks, through releases and reused handles', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 150 }), fc.array(selector, { minLength: 1, maxLength: 6 }), async (ops, selectors) => {
        const dir = mkdtempSync(join(tmpdir(), 's4-hot-postings-'));
        const ref = { ns: 'default', shard: 0 };
        const tier = await EmbeddedHotTier.open({ dir, fsync: 'never', now: () => 0 });
        try {
          const lease = (await tier.acquireLease(ref, 'me', 60_000))!;
          const lengths = new Map<string, number>();
          // Series no selector names, so that the metrics' logs outnumber a tag's list and the lists are used.
          for (let i = 0; i < 40; i++)
            for (const m of ['m', 'n']) {
              const key: SeriesKey = { metric: m, tags: { h: `p${i}` } };
              await tier.append([{ ref, window: i % 2 === 0 ? 0 : 3_600_000, id: seriesId(key), key, data: Uint8Array.of(i) }]);
            }
          for (const o of ops) {
            const key: SeriesKey = { metric: o.metric, tags: o.tags };
            const id = seriesId(key);
            const at = `${id}@${o.window}`;
            if (o.type === 'append') {
              await tier.append([{ ref, window: o.window, id, key, data: Uint8Array.of(o.byte) }]);
              lengths.set(at, (lengths.get(at) ?? 0) + 1);
            } else if (lengths.has(at)) {
              await tier.release(lease, o.window, [{ id, length: lengths.get(at)! }]);
              lengths.delete(at);
            }
          }
          const text = (logs: readonly { id: string; window: number; data: Uint8Array }[]) => logs.map((l) => `${l.id}@${l.window}:${[...l.data]}`).sort();
          for (const sel of selectors) {
            const all = (await tier.scan(ref, sel.metric, 0, 2 * 3_600_000)).logs;
            const want = all.filter((l) => Object.entries(sel.tags).every(([k, v]) => l.key.tags[k] === v) && (sel.matchers?.every((m) => (m.op === '!=' ? l.key.tags[m.key] !== m.value : /^(?:[ab])$/.test(l.key.tags[m.key] ?? ''))) ?? true));
            const got = (await tier.scan(ref, sel.metric, 0, 2 * 3_600_000, { tags: sel.tags, matchers: sel.matchers })).logs;
            expect(text(got)).toEqual(text(want));
          }
        } finally {
          await tier.close();
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });
});
