import { afterAll, describe, expect, it } from 'vitest';
import { KEY_FOLDERS, currentDayRollupKey, currentRollupKey, folderPrefix, seriesId } from '@s4/core';
import { decodeCatalog, decodeRollupObject, decodeSegment } from '@s4/format';
import { FilesystemObjectStore, S3ObjectStore } from '@s4/storage';
import { expectOk, post, queryAll } from '../support/client.js';
import { ExpectedStore } from '../support/model.js';
import { MODES, modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';
import { s3Env } from '../support/servers.js';

const H = 3_600_000;
const MIN = 60_000;
// Closed hours a few hours back: flushed at once, compacted with S4_COMPACT_SETTLE_MS=0.
const H0 = Math.floor(Date.now() / H) * H - 4 * H;

describe.each(MODES)('deletes in the server, %s', (mode) => {
  let s4: S4Process | undefined;
  afterAll(async () => {
    await s4?.stop();
  });

  it('a delete is invisible to raw, rollup, latest and series queries at once, and gone from the objects after a compaction', async () => {
    const env = await modeEnv(mode, { S4_COMPACT_SETTLE_MS: '0', S4_COMPACT_DELETE_GRACE_MS: '0', S4_COMPACT_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000' });
    s4 = await S4Process.start(env);
    const url = s4.url;
    const samples = [];
    for (const host of ['a', 'b', 'c']) for (let t = H0; t < H0 + 2 * H; t += 5 * MIN) samples.push({ metric: 'del.m', tags: { host }, ts: t, fields: { value: t / MIN } });
    await expectOk(await post(`${url}/v1/write`, { samples }));
    await expectOk(await post(`${url}/v1/admin/flush`, {}));
    await expectOk(await post(`${url}/v1/admin/rollup`, {}));
    const range = { metric: 'del.m', from: String(H0), to: String(H0 + 2 * H) };
    const bKey = ExpectedStore.key('del.m', { host: 'b' });
    expect((await queryAll(url, range, 'json')).get(bKey)?.ts.length).toBe(24);

    // Only an admin key may delete: without keys configured every request is admin, so the guard's rule is checked in auth.spec.
    const bad = await fetch(`${url}/v1/series?metric=del.m&from=5&to=1`, { method: 'DELETE' });
    expect(bad.status).toBe(400);
    // Delete host b over the whole first hour and the first half of the second, and everything of host c.
    await expectOk(await fetch(`${url}/v1/series?metric=del.m&tag=host:b&from=${H0}&to=${H0 + H + 30 * MIN}`, { method: 'DELETE' }));
    await expectOk(await fetch(`${url}/v1/series?metric=del.m&tag=host:c`, { method: 'DELETE' }));

    const check = async () => {
      const raw = await queryAll(url, range, 'msgpack');
      expect([...raw.keys()].sort()).toEqual([ExpectedStore.key('del.m', { host: 'a' }), bKey].sort());
      expect(raw.get(bKey)!.ts).toEqual(Array.from({ length: 6 }, (_, i) => H0 + H + 30 * MIN + i * 5 * MIN));
      // Rollup-answered step queries: hour buckets, no deleted sample counted.
      const agg = (await (await expectOk(await fetch(`${url}/v1/query?metric=del.m&from=${H0}&to=${H0 + 2 * H}&step=1h&agg=count&groupBy=host`))).json()) as { series: { tags: Record<string, string>; fields: Record<string, number[]> }[] };
      const counts = Object.fromEntries(agg.series.map((s) => [s.tags.host, s.fields['count(value)']]));
      // Host b keeps only its second hour's last 30 minutes.
      expect(counts).toEqual({ a: [12, 12], b: [6] });
      const latest = (await (await expectOk(await fetch(`${url}/v1/latest?metric=del.m&from=${H0}&to=${H0 + H}`))).json()) as { series: { tags: Record<string, string> }[] };
      expect(latest.series.map((s) => s.tags.host)).toEqual(['a']);
      const listed = (await (await expectOk(await fetch(`${url}/v1/series?metric=del.m&from=${H0}&to=${H0 + H}`))).json()) as { series: { tags: Record<string, string> }[] };
      expect(listed.series.map((s) => s.tags.host)).toEqual(['a']);
    };
    await check();

    // The compactor rewrites every part the tombstones touch; the rollups are recomputed from the new parts.
    for (let i = 0; i < 2; i++) {
      const r = await post(`${url}/v1/admin/compact`, {});
      if (!r.ok) throw new Error(`compact: ${await r.text()}\n${s4.output()}`);
    }
    await expectOk(await post(`${url}/v1/admin/rollup`, {}));
    await check();
    const objects =
      mode === 'embedded'
        ? new FilesystemObjectStore(`${env.S4_DATA_DIR}/objects`)
        : new S3ObjectStore({ bucket: env.S4_S3_BUCKET!, prefix: '', region: s3Env().region, endpoint: s3Env().endpoint, forcePathStyle: true, maxSockets: 4 });
    const ns = env.S4_NAMESPACE!;
    const c = seriesId({ metric: 'del.m', tags: { host: 'c' } });
    const b = seriesId({ metric: 'del.m', tags: { host: 'b' } });
    // Every segment part in the store, and every rollup object a query can use: the ones computed
    // from exactly a window's current parts (and the day objects from those), as the planner picks them.
    const keys: string[] = [];
    for await (const o of objects.list(folderPrefix(ns, KEY_FOLDERS.segments))) if (o.key.endsWith('.s4seg')) keys.push(o.key);
    for await (const o of objects.list(folderPrefix(ns, KEY_FOLDERS.catalogs))) {
      if (!o.key.endsWith('.s4cat')) continue;
      const got = await objects.get(o.key);
      if (!got || got.notModified) continue;
      const catalog = decodeCatalog(got.body);
      const ref = { ns, shard: catalog.shard };
      const byWindow = new Map<number, string[]>();
      for (const e of catalog.entries) byWindow.set(e.window, [...(byWindow.get(e.window) ?? []), e.key]);
      const hourly = [...byWindow].map(([w, parts]) => currentRollupKey(ref, w, parts));
      keys.push(...hourly);
      // A day rollup exists only once its day is closed (rollup.md); when it does, it must be clean too.
      const dayKey = hourly.length > 0 ? currentDayRollupKey(ref, catalog.day, hourly) : null;
      if (dayKey && (await objects.get(dayKey))) keys.push(dayKey);
    }
    expect(keys.some((k) => k.endsWith('.s4seg'))).toBe(true);
    expect(keys.some((k) => k.endsWith('.s4rol'))).toBe(true);
    for (const key of keys) {
      const got = await objects.get(key);
      if (!got || got.notModified) throw new Error(`${key} is missing`);
      if (key.endsWith('.s4rol')) {
        // Rollups of column version 3 list series by key, not by entry: the deleted one must be gone.
        expect(decodeRollupObject(got.body).series.has(c) ? key : '').toBe('');
        continue;
      }
      for (const s of decodeSegment(got.body).series) {
        expect(s.id.startsWith(c) ? key : '').toBe('');
        if (s.id.startsWith(b)) expect(Math.min(...s.ts)).toBeGreaterThanOrEqual(H0 + H + 30 * MIN);
      }
    }
    await objects.close();
  });
});
