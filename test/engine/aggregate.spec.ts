import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalSeries, isDayRollupKey, seriesId, type Clock, type FieldValue, type GetOptions, type GetResult, type SeriesKey, type TagMatcher } from '@s4/core';
import { RAW_MARKER, bucketsToColumns, decodeRollupObject, decodeSegment, encodeSegment, readTrailer, rollupSeriesId, type SegmentSeriesInput } from '@s4/format';
import { CatalogStore, Flusher, QueryEngine, RollupBuilder, Writer, parseWrite, type AggregateSpec, type Tombstone, type TombstoneSource } from '@s4/engine';
import { EmbeddedHotTier, FilesystemObjectStore } from '@s4/storage';
import { ALL_AGGS, bruteAggregate, closeEnough } from '../support/brute.js';
import { ExpectedStore } from '../support/model.js';
import { tempDir } from '../support/servers.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 2, 1);
const SERIES: SeriesKey[] = [
  { metric: 'agg.m', tags: { s: 'a', g: 'x' } },
  { metric: 'agg.m', tags: { s: 'b', g: 'x' } },
  { metric: 'agg.m', tags: { s: 'c', g: 'y' } },
];

/** A whole engine on embedded adapters, wired as the server wires it. */
async function engine(tombstones?: TombstoneSource) {
  const dir = tempDir('agg');
  let now = H0 + 30 * 86_400_000;
  const clock: Clock & { set(t: number): void } = { now: () => now, set: (t) => (now = t) };
  const hot = await EmbeddedHotTier.open({ dir: `${dir}/hot`, fsync: 'never', now: clock.now });
  const objects = new FilesystemObjectStore(`${dir}/objects`);
  const catalogs = new CatalogStore(objects);
  const rollupCatalogs = new CatalogStore(objects, 'rollup');
  const opts = { ns: 'default', shards: 4 };
  return {
    dir,
    hot,
    writer: new Writer(hot, { ...opts, maxRecordBytes: 1 << 20 }),
    flusher: new Flusher(hot, objects, catalogs, { ...opts, owner: 'test', leaseTtlMs: 60_000, clock }),
    objects,
    rollupCatalogs,
    rollups: new RollupBuilder(hot, objects, catalogs, rollupCatalogs, { ...opts, clock }),
    query: new QueryEngine(hot, objects, catalogs, { ...opts, concurrency: 8, cacheBytes: 1 << 24, tombstones }, rollupCatalogs, clock),
    clock,
  };
}

type Write = { series: number; ts: number; value: FieldValue };
const write = fc.record({
  series: fc.integer({ min: 0, max: 2 }),
  ts: fc.integer({ min: 0, max: 3 * 3600 - 1 }).chain((s) => fc.constantFrom(H0 + s * 1000, H0 + s * 1000 + 250)),
  value: fc.oneof(
    { weight: 8, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) },
    { weight: 1, arbitrary: fc.constant(Number.NaN) },
    { weight: 1, arbitrary: fc.constant('text') },
    // Records whose members are numbers: not numbers of the field (rollups read only its root column).
    { weight: 1, arbitrary: fc.constantFrom<FieldValue>({ n: 1.5, a: [2, 'x'] }, [3, { n: 4 }]) },
  ),
});

async function apply(e: Awaited<ReturnType<typeof engine>>, model: ExpectedStore, writes: Write[]): Promise<void> {
  if (writes.length === 0) return;
  const samples = writes.map((w) => ({ ...SERIES[w.series]!, ts: w.ts, fields: { value: w.value } }));
  await writeSamples(e, samples);
  for (const s of samples) model.write(s.metric, s.tags, s.ts, s.fields);
}

async function writeSamples(e: Awaited<ReturnType<typeof engine>>, samples: { metric: string; tags: Record<string, string>; ts: number; fields: Record<string, FieldValue> }[]): Promise<void> {
  // NaN cannot travel in JSON, so the writes go through the engine directly with the same validation.
  await e.writer.write(parseWrite({ kind: 'json', body: { samples } }, { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 10, maxTags: 10, maxTagLength: 100, maxFutureMs: 1e9, maxNestingDepth: 64 }, e.clock.now()));
}

/** The segment objects (raw parts) a cold query engine over the engine's files gets for one aggregate. */
async function rawReadsOf(e: Awaited<ReturnType<typeof engine>>, spec: AggregateSpec): Promise<string[]> {
  const got: string[] = [];
  class Recording extends FilesystemObjectStore {
    override async get(key: string, options?: GetOptions): Promise<GetResult | null> {
      got.push(key);
      return super.get(key, options);
    }
  }
  const objects = new Recording(`${e.dir}/objects`);
  await new QueryEngine(e.hot, objects, new CatalogStore(objects), { ns: 'default', shards: 4, concurrency: 8, cacheBytes: 1 << 24 }, new CatalogStore(objects, 'rollup'), e.clock).aggregate(spec);
  return got.filter((k) => k.includes('/seg/'));
}

/** Writes flushed as a first part, late writes flushed as a second part (rolled up between, and after when asked), then writes left hot. */
async function load(e: Awaited<ReturnType<typeof engine>>, model: ExpectedStore, first: Write[], late: Write[], hotOnly: Write[], rollups?: { after: boolean }): Promise<void> {
  await apply(e, model, first);
  await e.flusher.flushAll(H0 + 10 * H);
  if (rollups) await e.rollups.rollupAll(0, H0 + 86_400_000);
  await apply(e, model, late);
  await e.flusher.flushAll(H0 + 10 * H);
  if (rollups?.after) await e.rollups.rollupAll(0, H0 + 86_400_000);
  await apply(e, model, hotOnly);
}

/** A selector of the aggregate, and which of SERIES it selects (worked out apart from the engine's matching). */
interface Picked {
  tags: Record<string, string>;
  matchers?: TagMatcher[];
  keeps: (s: SeriesKey) => boolean;
}
const PICKS: Picked[] = [
  { tags: { s: 'a' }, keeps: (s) => s.tags.s === 'a' },
  { tags: { g: 'y' }, keeps: (s) => s.tags.g === 'y' },
  { tags: {}, matchers: [{ key: 's', op: '=~', value: 'a|c' }], keeps: (s) => s.tags.s === 'a' || s.tags.s === 'c' },
  { tags: { s: 'none' }, keeps: () => false },
];

async function check(e: Awaited<ReturnType<typeof engine>>, model: ExpectedStore, step: number, from: number, to: number, groupAll: boolean, picked?: Picked): Promise<void> {
  const expected = model.expected();
  const got = await e.query.aggregate({ metric: 'agg.m', tags: picked?.tags ?? {}, matchers: picked?.matchers, from, to, step, aggs: ALL_AGGS, groupBy: groupAll ? [] : undefined });
  const chosen = SERIES.filter((s) => !picked || picked.keeps(s));
  const groups = groupAll ? [chosen] : chosen.map((s) => [s]);
  const want = groups
    .map((g) => ({ tags: groupAll ? {} : g[0]!.tags, ...bruteAggregate(g.map((s) => { const c = expected.get(ExpectedStore.key(s.metric, s.tags)); return { ts: c?.ts ?? [], values: c?.fields.value ?? [] }; }), from, to, step, ALL_AGGS) }))
    .filter((w) => w.ts.length > 0)
    .sort((a, b) => (canonicalSeries({ metric: 'agg.m', tags: a.tags }) < canonicalSeries({ metric: 'agg.m', tags: b.tags }) ? -1 : 1));
  expect(got.map((s) => s.tags)).toEqual(want.map((w) => w.tags));
  got.forEach((s, i) => {
    const w = want[i]!;
    expect(s.ts).toEqual(w.ts);
    for (const agg of ALL_AGGS) {
      const col = s.fields[`${agg}(value)`]!;
      col.forEach((v, k) => {
        if (!closeEnough(v as number, w.cols[agg]![k]!)) throw new Error(`${agg} at ${w.ts[k]} step ${step}: got ${v}, want ${w.cols[agg]![k]}`);
      });
    }
  });
}

describe('step aggregation equals brute force over the raw samples', () => {
  it('from rollups, raw segments, the hot tier or a mix, with late parts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { minLength: 1, maxLength: 300 }),
        fc.array(write, { maxLength: 100 }),
        fc.array(write, { maxLength: 50 }),
        fc.boolean(),
        fc.constantFrom(1000, 45_000, 60_000, 300_000, H, 2 * H, 86_400_000),
        fc.constantFrom([H0, H0 + 3 * H], [H0 - H, H0 + 4 * H], [H0 + 1234, H0 + 2 * H + 5678], [H0, H0 + 24 * H], [H0 - 24 * H, H0 + 48 * H]),
        fc.boolean(),
        fc.option(fc.constantFrom(...PICKS), { nil: undefined }),
        async (first, late, hotOnly, rollupAfterLate, step, [from, to], groupAll, picked) => {
          const e = await engine();
          const model = new ExpectedStore();
          try {
            await load(e, model, first, late, hotOnly, { after: rollupAfterLate });
            await check(e, model, step, from, to, groupAll, picked);
          } finally {
            await e.hot.close();
          }
        },
      ),
      { numRuns: 40, seed: 20261122 },
    );
  });

  it('answers a selected series held only in the hot tier, beside flushed and rolled-up series', async () => {
    const e = await engine();
    const model = new ExpectedStore();
    try {
      const hour = (series: number, from: number, value: number) => Array.from({ length: 60 }, (_, i) => ({ series, ts: from + i * 60_000, value: value + i }));
      await apply(e, model, [...hour(0, H0, 1), ...hour(1, H0, 100)]);
      await e.flusher.flushAll(H0 + 10 * H);
      await e.rollups.rollupAll(0, H0 + 86_400_000);
      await apply(e, model, hour(2, H0 + H, 1000)); // c: never flushed
      for (const picked of PICKS) for (const step of [60_000, H]) await check(e, model, step, H0, H0 + 3 * H, false, picked);
    } finally {
      await e.hot.close();
    }
  });

  it('changes a rolled-up answer to the right one when late data lands in that window', async () => {
    const e = await engine();
    const model = new ExpectedStore();
    await apply(e, model, Array.from({ length: 3600 }, (_, i) => ({ series: 0, ts: H0 + i * 1000, value: 1 })));
    await e.flusher.flushAll(H0 + 10 * H);
    expect((await e.rollups.rollupAll(0, H0 + 86_400_000)).objects).toBeGreaterThan(0);
    const before = await e.query.aggregate({ metric: 'agg.m', tags: { s: 'a' }, from: H0, to: H0 + H, step: H, aggs: ['sum', 'count'] });
    expect(before[0]!.fields).toEqual({ 'sum(value)': [3600], 'count(value)': [3600] });

    await apply(e, model, Array.from({ length: 100 }, (_, i) => ({ series: 0, ts: H0 + i * 1000, value: 11 })));
    await e.flusher.flushAll(H0 + 10 * H);
    const stale = await e.query.aggregate({ metric: 'agg.m', tags: { s: 'a' }, from: H0, to: H0 + H, step: H, aggs: ['sum', 'count'] });
    expect(stale[0]!.fields).toEqual({ 'sum(value)': [4600], 'count(value)': [3600] });
    expect((await e.rollups.rollupAll(0, H0 + 86_400_000)).objects).toBe(2); // the hour, and its day
    const after = await e.query.aggregate({ metric: 'agg.m', tags: { s: 'a' }, from: H0, to: H0 + H, step: 60_000, aggs: ['sum'] });
    expect(after[0]!.fields['sum(value)']!.slice(0, 3)).toEqual([660, 460, 60]);
    const day = await e.query.aggregate({ metric: 'agg.m', tags: { s: 'a' }, from: H0, to: H0 + 24 * H, step: 24 * H, aggs: ['sum', 'count'] });
    expect(day[0]!.fields).toEqual({ 'sum(value)': [4600], 'count(value)': [3600] });
    await e.hot.close();
  });
});

/** Regular series: every `interval` ms over three hours, with some samples missing and some late. */
const dense = (series: number, interval: number, rnd: () => number): Write[] =>
  Array.from({ length: (3 * H) / interval }, (_, i) => ({ series, ts: H0 + i * interval, value: Math.round(rnd() * 10_000) / 100 })).filter(() => rnd() > 0.05);

describe('rollups and deletes', () => {
  it('answers a window from raw data when a tombstone matches a series its rollup stores buckets for', async () => {
    const dead: Tombstone[] = [];
    const e = await engine({ forMetric: async (_ns, metric) => dead.filter((t) => t.metric === metric), list: async () => dead });
    const model = new ExpectedStore();
    let x = 11;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    await apply(e, model, [...dense(0, 1000, rnd), ...dense(1, 1000, rnd), ...dense(2, 10_000, rnd)]);
    await e.flusher.flushAll(H0 + 10 * H);
    await e.rollups.rollupAll(0, H0 + 86_400_000);
    const counts = async () => {
      // A whole closed day: its day object answers (the clock is a month later).
      const got = await e.query.aggregate({ metric: 'agg.m', tags: {}, from: H0, to: H0 + 24 * H, step: H, aggs: ['count'] });
      return Object.fromEntries(got.map((s) => [s.tags.s, s.fields['count(value)']]));
    };
    const before = await counts();
    // Ten minutes of series b (1 Hz, stored at 1 min and 1 h) and of series c (10 s, stored at 1 h) in the second hour.
    dead.push({ id: 't1', metric: 'agg.m', tags: { s: 'b' }, from: H0 + H + 600_000, to: H0 + H + 1_200_000, createdAt: 0 });
    dead.push({ id: 't2', metric: 'agg.m', tags: { s: 'c' }, from: H0 + H + 600_000, to: H0 + H + 1_200_000, createdAt: 0 });
    const after = await counts();
    const gone = (i: number, from: number, to: number) => {
      const col = model.expected().get(ExpectedStore.key('agg.m', SERIES[i]!.tags))!;
      return col.ts.filter((t) => t >= from && t < to).length;
    };
    expect(gone(1, H0 + H + 600_000, H0 + H + 1_200_000)).toBeGreaterThan(500);
    expect(after.a).toEqual(before.a);
    expect(after.b).toEqual([before.b![0], before.b![1]! - gone(1, H0 + H + 600_000, H0 + H + 1_200_000), before.b![2]]);
    expect(after.c).toEqual([before.c![0], before.c![1]! - gone(2, H0 + H + 600_000, H0 + H + 1_200_000), before.c![2]]);
    await e.hot.close();
  });
});

/**
 * Rewrites every registered rollup object of the test day as column version 2 (an entry per series
 * and resolution, as written before version 3) at the same key, and registers its new footer.
 */
async function rewriteAsV2(e: Awaited<ReturnType<typeof engine>>): Promise<number> {
  const day = Math.floor(H0 / 86_400_000) * 86_400_000;
  let rewritten = 0;
  for (const shard of [0, 1, 2, 3]) {
    const ref = { ns: 'default', shard };
    const replaced = new Map<string, { size: number; footerOffset: number; footerLength: number }>();
    for (const en of (await e.rollupCatalogs.load(ref, day)).catalog.entries) {
      const got = await e.objects.get(en.key);
      if (!got || got.notModified) throw new Error(`${en.key} is missing`);
      const { window, series } = decodeRollupObject(got.body);
      const entries: SegmentSeriesInput[] = [];
      for (const [id, s] of series) {
        if (s.byRes.size === 0) entries.push({ id: rollupSeriesId(id, RAW_MARKER), metric: s.metric, tags: s.tags, ts: [], fields: {} });
        for (const [res, byField] of s.byRes) entries.push({ id: rollupSeriesId(id, res), metric: s.metric, tags: s.tags, ...bucketsToColumns(byField) });
      }
      const bytes = encodeSegment({ ns: 'default', shard, window, series: entries });
      expect(decodeSegment(bytes).series.every((x) => !x.id.startsWith('@'))).toBe(true);
      await e.objects.put(en.key, bytes);
      replaced.set(en.key, { size: bytes.length, ...readTrailer(bytes.subarray(bytes.length - 24)) });
    }
    await e.rollupCatalogs.update(ref, day, (c) => ({ ...c, entries: c.entries.map((x) => { const r = replaced.get(x.key); return r ? { ...x, size: r.size, footerOffset: r.footerOffset, footerLength: r.footerLength } : x; }) }));
    rewritten += replaced.size;
  }
  return rewritten;
}

describe('rollups written before column version 3', () => {
  it('answer every step exactly, and fold into a day object', async () => {
    const e = await engine();
    const model = new ExpectedStore();
    let x = 5;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    await apply(e, model, [...dense(0, 1000, rnd), ...dense(1, 10_000, rnd), ...dense(2, 60_000, rnd)]);
    await e.flusher.flushAll(H0 + 10 * H);
    e.clock.set(H0 + 5 * H); // the day is open: hourly objects only
    await e.rollups.rollupAll(0, H0 + 86_400_000);
    expect(await rewriteAsV2(e)).toBeGreaterThan(0);
    // A cold reader: no footer of the version 3 objects cached.
    e.query = new QueryEngine(e.hot, e.objects, new CatalogStore(e.objects), { ns: 'default', shards: 4, concurrency: 8, cacheBytes: 1 << 24 }, e.rollupCatalogs, e.clock);
    for (const step of [60_000, H, 2 * H]) for (const groupAll of [false, true]) await check(e, model, step, H0, H0 + 3 * H, groupAll);
    e.clock.set(H0 + 27 * H); // closed: the day object is folded from the version 2 hourly objects
    expect((await e.rollups.rollupAll(0, H0 + 86_400_000)).objects).toBeGreaterThan(0);
    for (const step of [60_000, H, 86_400_000]) await check(e, model, step, H0, H0 + 24 * H, false);
    await e.hot.close();
  });
});

describe('rollups sized to the data', () => {
  it('stores 1 min for a 1 Hz series, only 1 h for 10 s and 60 s ones, and answers every step exactly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.array(write, { maxLength: 40 }),
        fc.constantFrom(60_000, 120_000, 300_000, H, 2 * H, 86_400_000),
        fc.constantFrom([H0, H0 + 3 * H], [H0 - 24 * H, H0 + 48 * H], [H0 + H, H0 + 2 * H], [H0 + 1234, H0 + 2 * H + 5678]),
        fc.boolean(),
        async (seed, late, step, [from, to], groupAll) => {
          let x = seed;
          const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
          const e = await engine();
          const model = new ExpectedStore();
          try {
            await apply(e, model, [...dense(0, 1000, rnd), ...dense(1, 10_000, rnd), ...dense(2, 60_000, rnd)]);
            await e.flusher.flushAll(H0 + 10 * H);
            await e.rollups.rollupAll(0, H0 + 86_400_000);
            await apply(e, model, late);
            await e.flusher.flushAll(H0 + 10 * H);
            await e.rollups.rollupAll(0, H0 + 86_400_000);
            await check(e, model, step, from, to, groupAll);
          } finally {
            await e.hot.close();
          }
        },
      ),
      { numRuns: 6, seed: 20261123 },
    );
  });

  it('folds a closed day into one object holding each resolution whole, and deletes what it replaced after the grace', async () => {
    const e = await engine();
    const model = new ExpectedStore();
    let x = 7;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    await apply(e, model, [...dense(0, 1000, rnd), ...dense(1, 10_000, rnd)]);
    await e.flusher.flushAll(H0 + 10 * H);
    e.clock.set(H0 + 2 * H); // the day is open: hourly objects only
    const first = await e.rollups.rollupAll(0, H0 + 86_400_000);
    const hourly = await allRollups(e);
    expect(hourly.every((k) => !isDayRollupKey(k))).toBe(true);
    expect(first.objects).toBe(hourly.length);
    const shardsWithData = hourly.length / 3;
    expect([1, 2]).toContain(shardsWithData);

    e.clock.set(H0 + 27 * H); // closed (a day and its late-data window of 3 h ago): one day object replaces them
    expect((await e.rollups.rollupAll(0, H0 + 86_400_000)).objects).toBe(shardsWithData);
    const days = await allRollups(e);
    expect(days).toHaveLength(shardsWithData);
    const stored = new Map<string, string[]>();
    for (const dayKey of days) {
      expect(isDayRollupKey(dayKey)).toBe(true);
      const got = await e.objects.get(dayKey);
      if (!got || got.notModified) throw new Error(`${dayKey} is missing`);
      for (const [id, s] of decodeRollupObject(got.body).series) {
        stored.set(id, [...s.byRes.keys()].sort());
        for (const [resolution, byField] of s.byRes) {
          const starts = new Set([...byField.values()].flatMap((l) => l.map((b) => b.start)));
          if (resolution === '1m') expect(starts.size).toBe(180);
          if (resolution === '1h') expect(starts.size).toBe(3);
        }
      }
    }
    expect(stored.get(seriesId(SERIES[0]!))).toEqual(['1h', '1m']);
    expect(stored.get(seriesId(SERIES[1]!))).toEqual(['1h']);
    for (const k of hourly) expect(await e.objects.get(k)).not.toBeNull(); // within the grace

    e.clock.set(H0 + 27 * H + 600_000);
    expect((await e.rollups.rollupAll(0, H0 + 86_400_000)).deleted).toBe(hourly.length);
    for (const k of hourly) expect(await e.objects.get(k)).toBeNull();
    await check(e, model, 60_000, H0 - 24 * H, H0 + 48 * H, false);
    await check(e, model, H, H0 - 24 * H, H0 + 48 * H, true);
    // Ranges that cover the day in part (the last 24 hours): the day object answers the whole
    // hours inside them, clipped; a partly covered hour is read raw.
    for (const [from, to] of [
      [H0 + H, H0 + 48 * H],
      [H0 - 5 * H, H0 + 2 * H],
      [H0 + H, H0 + 2 * H],
      [H0 + H + 1_800_000, H0 + 3 * H - 60_000],
    ] as const) {
      await check(e, model, 60_000, from, to, false);
      await check(e, model, H, from, to, true);
      await check(e, model, 24 * H, from, to, false);
    }
    await e.hot.close();
  });

  it('answers a range starting inside a closed day from its day object, also when the day holds parts of other metrics', async () => {
    const e = await engine();
    const model = new ExpectedStore();
    let x = 13;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    await apply(e, model, [...dense(0, 1000, rnd), ...dense(1, 10_000, rnd)]);
    await e.flusher.flushAll(H0 + 10 * H);
    e.clock.set(H0 + 27 * H); // closed: one day object per shard
    await e.rollups.rollupAll(0, H0 + 86_400_000);
    // The last hours of the day, as "the last 24 hours" asks: the day's first hour is outside.
    // Step 1 h: every series stored it (at 1 min the 10 s one is read raw by design).
    const spec: AggregateSpec = { metric: 'agg.m', tags: {}, from: H0 + H, to: H0 + 48 * H, step: H, aggs: ['avg', 'max'] };
    expect(await rawReadsOf(e, spec)).toEqual([]);
    await check(e, model, 60_000, H0 + H, H0 + 48 * H, false);
    // Another metric's samples in the day's second hour, in every shard: parts the day object's key names too.
    await writeSamples(e, Array.from({ length: 40 }, (_, i) => ({ metric: 'agg.other', tags: { s: `o${i}` }, ts: H0 + H + 5_000, fields: { value: i } })));
    await e.flusher.flushAll(H0 + 10 * H);
    await e.rollups.rollupAll(0, H0 + 86_400_000);
    expect(await rawReadsOf(e, spec)).toEqual([]);
    expect(await rawReadsOf(e, { ...spec, from: H0, to: H0 + 24 * H })).toEqual([]);
    await check(e, model, 60_000, H0 + H, H0 + 48 * H, false);
    await check(e, model, H, H0, H0 + 24 * H, true);
    await e.hot.close();
  });
});

async function allRollups(e: Awaited<ReturnType<typeof engine>>): Promise<string[]> {
  const day = Math.floor(H0 / 86_400_000) * 86_400_000;
  const shards = [0, 1, 2, 3];
  const out: string[] = [];
  for (const shard of shards) for (const en of (await e.rollupCatalogs.load({ ns: 'default', shard }, day)).catalog.entries) out.push(en.key);
  return out.sort();
}

describe('latest equals brute force over the raw samples', () => {
  it('whatever parts, hot data, deletes and range; a series that ends early in a window read whole', async () => {
    // Series 2 writes only in the first 20 minutes of each hour: its latest lies before the end of its window's parts.
    const early = write.map((w) => (w.series === 2 ? { ...w, ts: H0 + Math.floor((w.ts - H0) / H) * H + ((w.ts - H0) % H) % 1_200_000 } : w));
    const tombstone = fc.record({ series: fc.integer({ min: 0, max: 2 }), from: fc.integer({ min: 0, max: 3 * 3600 }), minutes: fc.integer({ min: 0, max: 45 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(early, { minLength: 1, maxLength: 300 }),
        fc.array(early, { maxLength: 100 }),
        fc.array(early, { maxLength: 30 }),
        fc.array(tombstone, { maxLength: 3 }),
        fc.constantFrom([H0, H0 + 3 * H], [H0 - H, H0 + 4 * H], [H0 + 1234, H0 + 2 * H + 5678], [H0 + H / 2, H0 + H + 600_000]),
        async (first, late, hotOnly, cuts, [from, to]) => {
          const dead: Tombstone[] = cuts.map((c, i) => ({ id: `t${i}`, metric: 'agg.m', tags: SERIES[c.series]!.tags, from: H0 + c.from * 1000, to: H0 + c.from * 1000 + c.minutes * 60_000 + 1, createdAt: 0 }));
          const e = await engine({ forMetric: async (_ns, metric) => dead.filter((t) => t.metric === metric), list: async () => dead });
          const model = new ExpectedStore();
          try {
            await load(e, model, first, late, hotOnly);
            const expected = model.expected();
            const want = SERIES.flatMap((s) => {
              const c = expected.get(ExpectedStore.key(s.metric, s.tags));
              if (!c) return [];
              const cut = dead.filter((t) => t.tags.s === s.tags.s);
              for (let i = c.ts.length - 1; i >= 0; i--) {
                const t = c.ts[i]!;
                if (t < from || t >= to || cut.some((d) => t >= d.from && t < d.to)) continue;
                return [{ tags: s.tags, ts: [t], value: c.fields.value![i] }];
              }
              return [];
            });
            const got = await e.query.latest({ metric: 'agg.m', tags: {}, from, to });
            expect(got.map((r) => ({ tags: r.tags, ts: r.ts, value: r.fields.value?.[0] }))).toEqual(want);
          } finally {
            await e.hot.close();
          }
        },
      ),
      { numRuns: 40, seed: 20261129 },
    );
  });

  it('reads past deleted last samples to the flushed one before them, not to an earlier one still hot', async () => {
    // c at 1 Hz for 20 min: a block of two 10-minute row groups (a text field, so that so few
    // samples are split). The second group is deleted, so the latest is the first group's last
    // sample, which a read of the parts' end never decodes.
    const dead: Tombstone[] = [{ id: 't', metric: 'agg.m', tags: SERIES[2]!.tags, from: H0 + 600_000, to: H0 + 1_200_000, createdAt: 0 }];
    const e = await engine({ forMetric: async (_ns, metric) => dead.filter((t) => t.metric === metric), list: async () => dead });
    const model = new ExpectedStore();
    try {
      await writeSamples(e, Array.from({ length: 1200 }, (_, i) => ({ ...SERIES[2]!, ts: H0 + i * 1000, fields: { value: i, note: 'n' } })));
      await e.flusher.flushAll(H0 + 10 * H);
      await apply(e, model, [{ series: 2, ts: H0 + 300_500, value: -1 }]);
      const got = await e.query.latest({ metric: 'agg.m', tags: {}, from: H0, to: H0 + H });
      expect(got.map((r) => [r.tags.s, r.ts[0], r.fields.value?.[0]])).toEqual([['c', H0 + 599_000, 599]]);
    } finally {
      await e.hot.close();
    }
  });

  it('takes a flushed sample over an earlier one still hot, for a series that ends before the other series of its window', async () => {
    const e = await engine();
    const model = new ExpectedStore();
    try {
      // b and c share a shard (of 4): one part holds both, ending where b ends.
      await apply(e, model, [
        { series: 1, ts: H0 + 3_540_000, value: 1 },
        { series: 2, ts: H0 + 600_000, value: 2 },
        { series: 2, ts: H0 + 900_000, value: 3 },
      ]);
      await e.flusher.flushAll(H0 + 10 * H);
      await apply(e, model, [{ series: 2, ts: H0 + 300_000, value: 4 }]);
      const got = await e.query.latest({ metric: 'agg.m', tags: {}, from: H0, to: H0 + H });
      expect(got.map((r) => [r.tags.s, r.ts[0], r.fields.value?.[0]])).toEqual([['b', H0 + 3_540_000, 1], ['c', H0 + 900_000, 3]]);
    } finally {
      await e.hot.close();
    }
  });
});
