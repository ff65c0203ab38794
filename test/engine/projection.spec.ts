import { afterAll, describe, expect, it } from 'vitest';
import { type Clock, type FieldValue } from '@s4/core';
import { CatalogStore, Flusher, QueryEngine, Writer, parseWrite } from '@s4/engine';
import { projectColumns } from '@s4/format';
import { EmbeddedHotTier, FilesystemObjectStore } from '@s4/storage';
import { gpsRecords } from '../../libs/format/src/testing/gps.js';
import { tempDir } from '../support/servers.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 2, 1);
const KEY = { metric: 'machine.gps', tags: { device: 'dm-1' } };
const LIMITS = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 100, maxTags: 10, maxTagLength: 100, maxFutureMs: 1e9, maxNestingDepth: 64 };

/** GPS records over two hours, with shapes that change: a key that comes and goes, a type change, key order. */
function records(): { ts: number; fields: Record<string, FieldValue> }[] {
  const { records: rs } = gpsRecords(2 * 1200);
  return rs.map((r, i) => {
    const fields = r as Record<string, FieldValue>;
    if (i % 50 === 7) fields['imu'] = 'offline';
    if (i % 61 === 3) fields['position'] = { lon: 151.2, lat: -33.8 };
    return { ts: H0 + i * 3000, fields };
  });
}

async function engine() {
  const dir = tempDir('projection');
  const clock: Clock = { now: () => H0 + 30 * 86_400_000 };
  const hot = await EmbeddedHotTier.open({ dir: `${dir}/hot`, fsync: 'never', now: clock.now });
  const objects = new FilesystemObjectStore(`${dir}/objects`);
  const catalogs = new CatalogStore(objects);
  const opts = { ns: 'default', shards: 2 };
  // A new engine per read, so that no read is served from a cache another filled.
  const query = () => new QueryEngine(hot, objects, catalogs, { ...opts, concurrency: 8, cacheBytes: 1 << 26 }, undefined, clock);
  return { hot, clock, query, writer: new Writer(hot, { ...opts, maxRecordBytes: 1 << 20 }), flusher: new Flusher(hot, objects, catalogs, { ...opts, owner: 'test', leaseTtlMs: 60_000, clock }) };
}

async function read(q: QueryEngine, fields?: string[]) {
  const out = [];
  for await (const s of q.query({ ...KEY, from: H0, to: H0 + 3 * H, fields })) out.push(s);
  expect(out).toHaveLength(1);
  return { ts: out[0]!.ts, fields: out[0]!.fields, bytes: q.counters.objectBytes, gets: q.counters.objectReads };
}

/** JSON of each sample's record: key order counts. */
const asRecords = (c: { ts: number[]; fields: Record<string, FieldValue[]> }) =>
  c.ts.map((t, i) => JSON.stringify([t, Object.fromEntries(Object.keys(c.fields).sort().flatMap((k) => (c.fields[k]![i] === null ? [] : [[k, c.fields[k]![i]]])))]));

describe('projection by path through the engine', () => {
  let e: Awaited<ReturnType<typeof engine>>;
  const input = records();
  const all = { ts: input.map((r) => r.ts), fields: {} as Record<string, FieldValue[]> };
  for (const [i, r] of input.entries()) for (const [k, v] of Object.entries(r.fields)) (all.fields[k] ??= new Array<FieldValue>(input.length).fill(null))[i] = v;
  const PATHS = ['imu.vibration', 'sats.prn', 'position.lat'];

  afterAll(async () => {
    await e?.hot.close();
  });

  it('reads nested records exactly and projected by path from the hot tier', async () => {
    e = await engine();
    const samples = input.map((r) => ({ ...KEY, ...r }));
    await e.writer.write(parseWrite({ kind: 'json', body: { samples } }, LIMITS, e.clock.now()));
    expect(asRecords(await read(e.query()))).toEqual(asRecords(all));
    const projected = await read(e.query(), PATHS);
    expect(asRecords(projected)).toEqual(asRecords(projectColumns(all, PATHS)));
    expect(Object.keys(projected.fields).sort()).toEqual(['imu', 'position', 'sats']);
  });

  it('after a flush, reads them exactly, and projected by path with a fraction of the bytes', async () => {
    const stats = await e.flusher.flushAll(H0 + 10 * H);
    expect(stats.samples).toBe(input.length);
    const whole = await read(e.query());
    expect(asRecords(whole)).toEqual(asRecords(all));
    const projected = await read(e.query(), PATHS);
    expect(asRecords(projected)).toEqual(asRecords(projectColumns(all, PATHS)));
    console.log(`whole: ${whole.bytes} bytes in ${whole.gets} GETs; ${PATHS.join(',')}: ${projected.bytes} in ${projected.gets}`);
    expect(projected.bytes).toBeLessThan(whole.bytes / 3);
    const leaf = await read(e.query(), ['imu.vibration.rms']);
    expect(asRecords(leaf)).toEqual(asRecords(projectColumns(all, ['imu.vibration.rms'])));
    console.log(`imu.vibration.rms: ${leaf.bytes} bytes in ${leaf.gets} GETs`);
    expect(leaf.bytes).toBeLessThan(whole.bytes / 8);
    // Two windows: the whole read is 2 footers + 2 blocks; a block of 1,200 records is two row
    // groups of 30 minutes (segment.md, "Row groups"), and a leaf costs two GETs per group (the
    // timestamps and small columns at the group's start, then the leaf's chunk).
    expect(whole.gets).toBe(4);
    expect(leaf.gets).toBe(2 + 2 * 2 * 2);
    // A plain field name still selects the whole field, and an unknown one is a column of nulls.
    const plain = await read(e.query(), ['meta', 'nothing']);
    expect(asRecords(plain)).toEqual(asRecords(projectColumns(all, ['meta'])));
  });

  it('merges hot and flushed data of the same window under one projection, newest write winning', async () => {
    const late = input.slice(0, 5).map((r) => ({ ...KEY, ts: r.ts, fields: { ...r.fields, imu: { vibration: { rms: -1 } } } }));
    await e.writer.write(parseWrite({ kind: 'json', body: { samples: late } }, LIMITS, e.clock.now()));
    const got = await read(e.query(), ['imu.vibration.rms', 'sats.prn']);
    const want = { ts: all.ts, fields: { ...all.fields, imu: all.fields['imu']!.map((v, i) => (i < 5 ? { vibration: { rms: -1 } } : v)) } };
    expect(asRecords(got)).toEqual(asRecords(projectColumns(want, ['imu.vibration.rms', 'sats.prn'])));
  });
});
