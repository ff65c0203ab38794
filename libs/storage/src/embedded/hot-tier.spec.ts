import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError, seriesId, type HotAppend, type SeriesKey } from '@s4/core';
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
    // Appends of odd sizes, so one of them lands across the last free page and is written short.
    for (let i = 0; i < 400; i++) {
      try {
        await tier.append([append(i, 3_000 + (i % 7) * 1_111)]);
        acked.push(i);
      } catch (e) {
        expect(e).toBeInstanceOf(UnavailableError);
        expect((e as UnavailableError).status).toBe(503);
        expect((e as Error).message).toMatch(/full/);
        refused++;
      }
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
});
