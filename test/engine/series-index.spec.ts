import { afterEach, describe, expect, it } from 'vitest';
import { seriesIndexKey, type GetOptions, type ObjectStore, type TagMatcher } from '@s4/core';
import { decodeFooter, decodeSeriesIndex, encodeSeriesIndex, indexedEntry, SERIES_INDEX_VERSION } from '@s4/format';
import { CatalogStore, QueryEngine, SeriesIndexBuilder, SeriesIndexStore, type QuerySpec } from '@s4/engine';
import { H, Harness, dayOf, type Sample } from '../support/compact-harness.js';

const H0 = Date.UTC(2026, 9, 7, 3);
const HOSTS = 400;

/** An object store that records every GET (key and bytes), so a test can see what a query read. */
function counting(inner: ObjectStore) {
  const gets: { key: string; bytes: number }[] = [];
  const store: ObjectStore = {
    put: (k, b, c) => inner.put(k, b, c),
    head: (k) => inner.head(k),
    list: (p) => inner.list(p),
    delete: (k) => inner.delete(k),
    close: async () => undefined,
    async get(key: string, options?: GetOptions) {
      const got = await inner.get(key, options);
      gets.push({ key, bytes: got && !got.notModified ? got.body.length : 0 });
      return got;
    },
  };
  return { store, gets };
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

function samples(from: number, to: number, hosts: number, value: (host: number, t: number) => number): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < hosts; i++) for (let t = from; t < to; t += 300_000) out.push({ metric: 'cpu', tags: { host: `h${String(i).padStart(4, '0')}`, dc: `dc${i % 4}` }, ts: t, fields: { v: value(i, t) } });
  return out;
}

describe('series index (Redis + S3)', () => {
  it('a query for 1 % of the series reads only their blocks and the index, never a footer, and answers as without the index', async () => {
    const h = await Harness.open('redis+s3', { shards: 2, start: H0 + 3 * H });
    open.push(h);
    // Two flushed hours, then late data for the first hour (a second part), and an hour still hot.
    await h.writeAndFlush(samples(H0, H0 + 2 * H, HOSTS, (i, t) => i + t / 1e9));
    const builder = new SeriesIndexBuilder(h.objects, new CatalogStore(h.objects), { ns: h.ns, shards: 2, clock: h.clock, lookbackMs: 30 * 86_400_000 });
    const built = await builder.buildAll();
    expect(built.indexes).toBe(2); // one per shard-day
    expect(await builder.buildAll()).toEqual({ indexes: 0, footers: 0, bytes: 0 });
    await h.writeAndFlush(samples(H0, H0 + H, 8, (i) => -i));
    await h.write(samples(H0 + 2 * H, H0 + 3 * H, HOSTS, (i) => i * 2));

    const engine = (seriesIndex: boolean) => {
      const c = counting(h.objects);
      const q = new QueryEngine(h.hot, c.store, new CatalogStore(c.store), { ns: h.ns, shards: 2, concurrency: 8, cacheBytes: 1 << 26, coalesceGapBytes: 0, seriesIndex }, undefined, h.clock);
      return { q, gets: c.gets };
    };
    const read = async (q: QueryEngine, spec: QuerySpec) => {
      const out = [];
      for await (const s of q.query(spec)) out.push(s);
      return out;
    };
    // 4 hosts of 400: h0100..h0103 (1 %).
    const selectors: { tags: Record<string, string>; matchers?: TagMatcher[] }[] = [
      { tags: {}, matchers: [{ key: 'host', op: '=~', value: 'h010[0-3]' }] },
      { tags: { dc: 'dc1' }, matchers: [{ key: 'host', op: '=~', value: 'h00.*' }, { key: 'host', op: '!=', value: 'h0005' }] },
      { tags: {}, matchers: [{ key: 'host', op: '!~', value: 'h0.*' }] },
      { tags: {}, matchers: [{ key: 'host', op: '=~', value: 'h000[0-7]' }] }, // holds the late part's series
    ];
    for (const sel of selectors) {
      const spec: QuerySpec = { metric: 'cpu', ...sel, from: H0, to: H0 + 3 * H };
      const plain = engine(false);
      const indexed = engine(true);
      const want = await read(plain.q, spec);
      const got = await read(indexed.q, spec);
      expect(got).toEqual(want);
      expect(plain.gets.some((g) => g.key.endsWith('.s4idx'))).toBe(false);
      if (sel.matchers![0]!.value === 'h010[0-3]') {
        expect(want.map((s) => s.tags['host']).sort()).toEqual(['h0100', 'h0101', 'h0102', 'h0103']);
        // What the indexed query read from segments: exactly the matching series' blocks (no gap is coalesced here).
        const segmentBytes = indexed.gets.filter((g) => g.key.endsWith('.s4seg')).reduce((n, g) => n + g.bytes, 0);
        let blockBytes = 0;
        let lateFooterBytes = 0;
        for (const ref of h.refs()) {
          const got = await h.objects.get(seriesIndexKey(ref, dayOf(H0)));
          const covered = new Set(decodeSeriesIndex(got && !got.notModified ? got.body : new Uint8Array()).parts.map((p) => p.key));
          for (const entry of await h.entries(ref, [dayOf(H0)])) {
            const footer = await h.objects.get(entry.key, { range: { offset: entry.footerOffset, length: entry.footerLength } });
            for (const s of decodeFooter(footer && !footer.notModified ? footer.body : new Uint8Array()).series) if (/^h010[0-3]$/.test(s.tags['host']!)) blockBytes += s.length;
            if (!covered.has(entry.key)) lateFooterBytes += entry.footerLength;
          }
        }
        // The late parts (flushed after the index was built) are the only ones whose footers are read.
        expect(lateFooterBytes).toBeGreaterThan(0);
        expect(segmentBytes).toBe(blockBytes + lateFooterBytes);
        const footerBytes = plain.gets.filter((g) => g.key.endsWith('.s4seg')).reduce((n, g) => n + g.bytes, 0) - blockBytes;
        console.log(`1 % of ${HOSTS} series: with the index ${indexed.gets.length} GETs, ${indexed.gets.reduce((n, g) => n + g.bytes, 0)} bytes (blocks ${segmentBytes}); without ${plain.gets.length} GETs, ${plain.gets.reduce((n, g) => n + g.bytes, 0)} bytes (footers ${footerBytes})`);
      }
    }

    // Series listing and labels agree with and without the index, hot series included.
    const plain = engine(false).q;
    const indexed = engine(true).q;
    const m: TagMatcher[] = [{ key: 'host', op: '=~', value: 'h03.*' }];
    expect(await indexed.series('cpu', {}, H0, H0 + 3 * H, m)).toEqual(await plain.series('cpu', {}, H0, H0 + 3 * H, m));
    expect(await indexed.series('cpu', {}, H0, H0 + 3 * H, m)).toHaveLength(100);
    expect(await indexed.labels({ metric: 'cpu', tags: {}, from: H0, to: H0 + H })).toEqual(['dc', 'host']);
    expect(await indexed.labelValues('dc', { metric: undefined, tags: {}, matchers: m, from: H0, to: H0 + 3 * H })).toEqual(['dc0', 'dc1', 'dc2', 'dc3']);
    expect(await indexed.labelValues('dc', { metric: 'mem', tags: {}, from: H0, to: H0 + 3 * H })).toEqual([]);
    // Each range and selector answers as from footers (an index reports a series once, whatever its parts; ranges cut per part).
    for (const [from, to] of [[H0, H0 + 3 * H], [H0 + H, H0 + 2 * H], [H0 + H / 2, H0 + H / 2 + 1], [H0 + 2 * H - 60_000, H0 + 2 * H], [H0 + 3 * H, H0 + 4 * H]] as const) {
      for (const sel of [{ metric: 'cpu', matchers: m }, { metric: undefined, matchers: [{ key: 'host', op: '=~', value: 'h00[0-9]|h1.*5' }] as TagMatcher[] }, { metric: 'cpu', matchers: [{ key: 'host', op: '!~', value: 'h0.*' }] as TagMatcher[] }]) {
        expect(await indexed.labelValues('host', { ...sel, tags: {}, from, to })).toEqual(await plain.labelValues('host', { ...sel, tags: {}, from, to }));
        expect(await indexed.series(sel.metric, {}, from, to, sel.matchers)).toEqual(await plain.series(sel.metric, {}, from, to, sel.matchers));
      }
      expect(await indexed.labels({ metric: undefined, tags: {}, from, to })).toEqual(await plain.labels({ metric: undefined, tags: {}, from, to }));
      for (const key of ['host', 'dc', 'none']) expect(await indexed.labelValues(key, { metric: undefined, tags: {}, from, to })).toEqual(await plain.labelValues(key, { metric: undefined, tags: {}, from, to }));
    }
  });

  it('a lost index answers the same from footers, and the next pass rebuilds it', async () => {
    const h = await Harness.open('redis+s3', { shards: 1, start: H0 + 3 * H });
    open.push(h);
    await h.writeAndFlush(samples(H0, H0 + 2 * H, 60, (i, t) => i * t));
    const builder = new SeriesIndexBuilder(h.objects, new CatalogStore(h.objects), { ns: h.ns, shards: 1, clock: h.clock, lookbackMs: 30 * 86_400_000 });
    await builder.buildAll();
    const key = seriesIndexKey({ ns: h.ns, shard: 0 }, dayOf(H0));
    const spec: QuerySpec = { metric: 'cpu', tags: {}, matchers: [{ key: 'host', op: '=~', value: 'h001.' }], from: H0, to: H0 + 2 * H };
    const run = async () => {
      const c = counting(h.objects);
      const q = new QueryEngine(h.hot, c.store, new CatalogStore(c.store), { ns: h.ns, shards: 1, concurrency: 8, cacheBytes: 1 << 26 }, undefined, h.clock);
      const out = [];
      for await (const s of q.query(spec)) out.push(s);
      return { out, footers: c.gets.filter((g) => g.key.endsWith('.s4seg')).length, index: c.gets.filter((g) => g.key === key && g.bytes > 0).length };
    };
    const before = await run();
    expect(before.out).toHaveLength(10);
    expect(before.index).toBe(1);

    await h.objects.delete([key]);
    const lost = await run();
    expect(lost.out).toEqual(before.out);
    expect(lost.index).toBe(0);
    expect(lost.footers).toBeGreaterThan(before.footers); // the footers, then the blocks

    const rebuilt = await builder.buildAll();
    expect(rebuilt).toMatchObject({ indexes: 1, footers: 2 });
    const again = await run();
    expect(again.out).toEqual(before.out);
    expect(again.index).toBe(1);
    expect(again.footers).toBe(before.footers);

    // Unreadable bytes under the key count as no index: queries read footers, the next pass rebuilds it.
    await h.objects.put(key, new TextEncoder().encode('not an index'));
    const corrupt = await run();
    expect(corrupt.out).toEqual(before.out);
    expect(corrupt.footers).toBe(lost.footers);
    expect(await builder.buildAll()).toMatchObject({ indexes: 1, footers: 2 });
    expect((await run()).footers).toBe(before.footers);

    // An index of version 1 (written by an older build) answers the same, and the next pass writes
    // it again in the current version from its own entries (no footer read).
    const current = await h.objects.get(key);
    if (!current || current.notModified) throw new Error('index missing');
    expect(current.body[4]).toBe(SERIES_INDEX_VERSION);
    const ix = decodeSeriesIndex(current.body);
    const input = { ns: ix.ns, shard: ix.shard, day: ix.day, parts: ix.parts.map((p) => ({ key: p.key, window: p.window, series: Array.from(p.ordinals, (_, i) => indexedEntry(ix, p, i)) })) };
    await h.objects.put(key, encodeSeriesIndex(input, undefined, 1));
    const old = await run();
    expect(old.out).toEqual(before.out);
    expect(old.footers).toBe(before.footers);
    expect(await builder.buildAll()).toMatchObject({ indexes: 1, footers: 0 });
    const upgraded = await h.objects.get(key);
    if (!upgraded || upgraded.notModified) throw new Error('index missing');
    expect(upgraded.body).toEqual(current.body);
    expect(await builder.buildAll()).toEqual({ indexes: 0, footers: 0, bytes: 0 });

    // A damaged block behind an intact head (version 2 reads blocks when a query does): the
    // query answers from footers, and a builder that reads the index (after a restart) rebuilds it.
    const damaged = current.body.slice();
    damaged[damaged.length - 5]! ^= 0xff; // inside the last part's last entry block, before its crc
    await h.objects.put(key, damaged);
    const broken = await run();
    expect(broken.out).toEqual(before.out);
    expect(broken.footers).toBeGreaterThan(before.footers);
    const restarted = new SeriesIndexBuilder(h.objects, new CatalogStore(h.objects), { ns: h.ns, shards: 1, clock: h.clock, lookbackMs: 30 * 86_400_000 });
    expect(await restarted.buildAll()).toMatchObject({ indexes: 1, footers: 2 });
    expect((await run()).footers).toBe(before.footers);
  });
});

describe('series index store (embedded)', () => {
  it('answers a repeated selection of an index too big for its cache share after a conditional GET, not a decode, until the index changes', async () => {
    const h = await Harness.open('embedded', { shards: 1, start: H0 + 3 * H });
    open.push(h);
    await h.writeAndFlush(samples(H0, H0 + H, 60, (i, t) => i * t));
    const builder = new SeriesIndexBuilder(h.objects, new CatalogStore(h.objects), { ns: h.ns, shards: 1, clock: h.clock, lookbackMs: 30 * 86_400_000 });
    await builder.buildAll();
    const key = seriesIndexKey({ ns: h.ns, shard: 0 }, dayOf(H0));
    const [entry] = await h.entries({ ns: h.ns, shard: 0 }, [dayOf(H0)]);
    const c = counting(h.objects);
    // A budget of 1 byte: the decoded index is never cached.
    const small = new SeriesIndexStore(c.store, 1, h.clock, 5_000);
    const selector = { metric: 'cpu', tags: {}, matchers: [{ key: 'host', op: '=~' as const, value: 'h001.' }] };
    const reads = () => c.gets.filter((g) => g.key === key).map((g) => g.bytes);
    const hosts = (list: { tags: Record<string, string> }[] | undefined) => list!.map((e) => e.tags['host']).sort();
    const want = await new SeriesIndexStore(h.objects, 1 << 26, h.clock).blocks(entry!, selector);
    expect(hosts(want)).toHaveLength(10);

    expect(await small.blocks(entry!, selector)).toEqual(want);
    expect(reads()).toEqual([expect.any(Number)]);
    expect(reads()[0]).toBeGreaterThan(0);
    // Again within the revalidation time: nothing read.
    expect(await small.blocks(entry!, selector)).toEqual(want);
    expect(reads()).toHaveLength(1);
    // Later: a conditional GET answered "not modified" (no body), the same entries.
    h.clock.set(h.clock.now() + 6_000);
    expect(await small.blocks(entry!, selector)).toEqual(want);
    expect(reads().slice(1)).toEqual([0]);
    // Another selector is not known: the index is read and decoded.
    const other = { metric: 'cpu', tags: { dc: 'dc1' }, matchers: [] };
    expect(hosts(await small.blocks(entry!, other))).toHaveLength(15);
    expect(reads()[2]).toBeGreaterThan(0);

    // The index rewritten (late data for the hour: a new part, ten more hosts): what was known goes.
    await h.writeAndFlush(samples(H0, H0 + H, 70, (i) => -i).slice(60 * 12));
    await builder.buildAll();
    h.clock.set(h.clock.now() + 6_000);
    const n = reads().length;
    const after = await small.blocks(entry!, selector);
    expect(after).toEqual(await new SeriesIndexStore(h.objects, 1 << 26, h.clock).blocks(entry!, selector));
    expect(reads().slice(n).some((b) => b > 0)).toBe(true);
  });

  it('asks again for a cached index that lacks a part the query reads, at most every half second', async () => {
    const h = await Harness.open('embedded', { shards: 1, start: H0 + 3 * H });
    open.push(h);
    await h.writeAndFlush(samples(H0, H0 + H, 20, (i, t) => i * t));
    const builder = new SeriesIndexBuilder(h.objects, new CatalogStore(h.objects), { ns: h.ns, shards: 1, clock: h.clock, lookbackMs: 30 * 86_400_000 });
    await builder.buildAll();
    const key = seriesIndexKey({ ns: h.ns, shard: 0 }, dayOf(H0));
    const c = counting(h.objects);
    const idx = new SeriesIndexStore(c.store, 1 << 26, h.clock, 5_000);
    const selector = { metric: 'cpu', tags: { dc: 'dc1' }, matchers: [] };
    const [first] = await h.entries({ ns: h.ns, shard: 0 }, [dayOf(H0)]);
    expect(await idx.blocks(first!, selector)).toHaveLength(5);
    const reads = () => c.gets.filter((g) => g.key === key).length;
    expect(reads()).toBe(1);

    // A second part (late data for the hour), indexed by the builder a second later: the copy is
    // 1 s old, younger than the 5 s revalidation, but it does not cover the part.
    await h.writeAndFlush(samples(H0, H0 + H, 24, (i) => -i).slice(20 * 12));
    await builder.buildAll();
    h.clock.set(h.clock.now() + 1_000);
    const second = (await h.entries({ ns: h.ns, shard: 0 }, [dayOf(H0)])).find((e) => e.key !== first!.key);
    expect(await idx.blocks(second!, selector)).toHaveLength(1);
    expect(reads()).toBe(2);
    expect((await idx.covering(second!))?.part.key).toBe(second!.key);

    // A part no index covers yet: asked again only once the copy is half a second old.
    await h.writeAndFlush(samples(H0, H0 + H, 28, (i) => i).slice(24 * 12));
    const third = (await h.entries({ ns: h.ns, shard: 0 }, [dayOf(H0)])).find((e) => e.key !== first!.key && e.key !== second!.key);
    expect(await idx.blocks(third!, selector)).toBeUndefined();
    expect(reads()).toBe(2);
    h.clock.set(h.clock.now() + 600);
    expect(await idx.blocks(third!, selector)).toBeUndefined();
    expect(reads()).toBe(3);
  });
});
