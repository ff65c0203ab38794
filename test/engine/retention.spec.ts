import { afterEach, describe, expect, it } from 'vitest';
import { DAY_MS, catalogKey, isDayRollupKey, namespacePrefix, type NamespacePolicy } from '@s4/core';
import { decodeCatalog } from '@s4/format';
import { Retention } from '@s4/engine';
import { H, Harness, MIN, type Sample, type StoreMode } from '../support/compact-harness.js';

const T0 = Date.UTC(2026, 9, 1);
const MODES: StoreMode[] = ['embedded', 'redis+s3'];

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

function policyOf(h: Harness): NamespacePolicy {
  return {
    name: h.ns,
    prefixes: [],
    shards: h.shards,
    rawRetentionMs: 2 * DAY_MS,
    rollups: [
      { resolution: '1m', retentionMs: 3 * DAY_MS },
      { resolution: '1h', retentionMs: null },
    ],
    backfillMs: 2 * DAY_MS,
    hotMs: 0,
    limits: { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxFields: 10, maxRecordBytes: 1 << 20, maxSamplesPerSecond: undefined },
  };
}

/** Every object of the namespace, by key, but the pending-delete lists (retention writes them). */
async function objectsOf(h: Harness): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const o of h.objects.list(namespacePrefix(h.ns))) if (!o.key.endsWith('.deletes')) out.add(o.key);
  return out;
}

describe.each(MODES)('retention on real stores, %s', (mode) => {
  it('takes expired parts, rollups and whole-day catalogs out of the catalogs first, deletes the objects after the grace, and nothing else', async () => {
    const h = await Harness.open(mode, { shards: 2, start: T0 + 4 * DAY_MS + H, realClock: false });
    open.push(h);
    const samples: Sample[] = [];
    for (let t = T0; t < T0 + 4 * DAY_MS; t += 3 * H) for (const host of ['a', 'b', 'c']) samples.push({ metric: 'm', tags: { host }, ts: t, fields: { v: t / MIN } });
    await h.writeAndFlush(samples);
    await h.rollups.rollupAll(0, T0 + 5 * DAY_MS);

    // What the catalogs name before retention: the oracle decides from each entry's own span.
    const now = T0 + 5 * DAY_MS;
    h.clock.set(now);
    const before = await objectsOf(h);
    const expired = new Set<string>();
    const droppedCatalogs = new Set<string>();
    for (const ref of h.refs())
      for (let day = T0; day < T0 + 4 * DAY_MS; day += DAY_MS) {
        const seg = await h.objects.get(catalogKey(ref, day));
        const segEntries = seg && !seg.notModified ? decodeCatalog(seg.body).entries : [];
        for (const e of segEntries) if (e.window + H <= now - 2 * DAY_MS) expired.add(e.key);
        // Raw retention 2 d: a segment catalog goes once its whole day is 2 d old.
        if (segEntries.length > 0 && day + DAY_MS <= now - 2 * DAY_MS) droppedCatalogs.add(catalogKey(ref, day));
        const rol = await h.objects.get(catalogKey(ref, day, 'rollup'));
        // Hourly rollups follow 1m (3 d); day objects 1h (forever); rollup catalogs stay (a kind in them is kept forever).
        if (rol && !rol.notModified) for (const e of decodeCatalog(rol.body).entries) if (!isDayRollupKey(e.key) && e.window + H <= now - 3 * DAY_MS) expired.add(e.key);
      }
    expect(expired.size).toBeGreaterThan(0);
    expect(droppedCatalogs.size).toBe(2 * 3);
    for (const k of [...expired, ...droppedCatalogs]) expect(before.has(k)).toBe(true);

    const retention = new Retention(h.hot, h.objects, h.catalogs, h.rollupCatalogs, { owner: 'retention-test', leaseTtlMs: 60_000, clock: h.clock, deleteGraceMs: 10 * MIN });
    const stats = await retention.run(policyOf(h));
    expect(stats.segments + stats.rollups).toBe(expired.size);
    expect(stats.catalogs).toBe(droppedCatalogs.size);

    // Catalog first: queries no longer see expired data, but the objects are still there for readers in flight.
    const q = h.query();
    const rows: number[] = [];
    for await (const s of q.query({ metric: 'm', tags: {}, from: T0, to: T0 + 5 * DAY_MS })) rows.push(...s.ts);
    expect(Math.min(...rows)).toBe(T0 + 3 * DAY_MS);
    expect(rows.length).toBe(3 * 8);
    expect(await objectsOf(h)).toEqual(before);

    // Before the grace, the compactor deletes nothing; after it, exactly what expired.
    const compactor = h.compactor({ deleteGraceMs: 10 * MIN, dayAfterMs: 0 }); // day folds off: this test watches retention alone
    await compactor.compactAll();
    expect(await objectsOf(h)).toEqual(before);
    h.clock.set(now + 10 * MIN);
    await compactor.compactAll();
    const want = [...before].filter((k) => !expired.has(k) && !droppedCatalogs.has(k));
    expect([...(await objectsOf(h))].sort()).toEqual(want.sort());

    // A second pass finds nothing more to do.
    expect(await retention.run(policyOf(h))).toEqual({ segments: 0, rollups: 0, catalogs: 0, bytes: 0, busyShards: 0 });
  });
});
