import { afterEach, describe, expect, it } from 'vitest';
import { PreconditionFailedError, currentRollupKey, isDaySegmentKey, pendingDeletesKey, segmentKey, type HotTier, type ObjectStore, type ShardRef } from '@s4/core';
import { decodePendingDeletes, type CatalogEntry } from '@s4/format';
import { OrphanSweeper, type Compactor } from '@s4/engine';
import { H, Harness, MIN, answers, dayOf, sleep, type Sample, type StoreMode } from '../support/compact-harness.js';
import { rng } from '../support/model.js';

const H0 = Date.UTC(2026, 9, 5, 6);
const METRICS = ['cpu', 'mem'];
const SELECTORS: Record<string, string>[] = [{}, { host: 'h1' }, { dc: 'b' }];
const MODES: StoreMode[] = ['embedded', 'redis+s3'];

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});
async function harness(mode: StoreMode, shards = 2): Promise<Harness> {
  const h = await Harness.open(mode, { shards, start: H0 + 3 * H });
  open.push(h);
  return h;
}

/** Series of two metrics over two hour windows, then late data in several rounds that overwrite earlier values. */
function rounds(seed: number): Sample[][] {
  const r = rng(seed);
  const series = [
    ...Array.from({ length: 6 }, (_, i) => ({ metric: 'cpu', tags: { host: `h${i}`, dc: i % 2 ? 'a' : 'b' } })),
    ...Array.from({ length: 3 }, (_, i) => ({ metric: 'mem', tags: { host: `h${i}`, dc: 'b' } })),
  ];
  const base: Sample[] = [];
  for (const s of series) for (let t = H0; t < H0 + 2 * H; t += 30_000) base.push({ ...s, ts: t, fields: { v: Math.round(r() * 1000) / 10 } });
  const late = (n: number, fields: () => Sample['fields']) =>
    Array.from({ length: n }, (): Sample => {
      const s = series[Math.floor(r() * series.length)]!;
      // Half on timestamps the base has (overwrites), half between them (new samples).
      const ts = H0 + Math.floor(r() * 240) * 30_000 + (r() < 0.5 ? 0 : 15_000);
      return { ...s, ts, fields: fields() };
    });
  const round2 = late(300, () => ({ v: -Math.round(r() * 1000), s: r() < 0.5 ? 'late' : 'later' }));
  // Round 3 overwrites a third of round 2's samples again, with other fields.
  const round3 = [
    ...round2.filter((_, i) => i % 3 === 0).map((x, i) => ({ ...x, fields: { v: 1e6 + i, j: { deep: [i, 'x', true] } } })),
    ...late(100, () => ({ v: r() < 0.1 ? Number.MAX_SAFE_INTEGER : r() * 1e-9, ok: r() < 0.5 })),
  ];
  const round4 = late(150, () => ({ v: Math.round(r() * 10) }));
  return [base, round2, round3, round4];
}

async function windowsOf(h: Harness, days: number[]): Promise<Map<string, CatalogEntry[]>> {
  const out = new Map<string, CatalogEntry[]>();
  for (const ref of h.refs())
    for (const e of await h.entries(ref, days)) {
      const k = `${ref.shard}/${e.window}`;
      out.set(k, [...(out.get(k) ?? []), e]);
    }
  return out;
}

async function pendingOf(h: Harness, ref: ShardRef) {
  const got = await h.objects.get(pendingDeletesKey(ref));
  return got && !got.notModified ? decodePendingDeletes(got.body) : [];
}

async function referencedExist(h: Harness, days: number[]): Promise<void> {
  for (const ref of h.refs()) for (const e of await h.entries(ref, days)) expect(await h.objects.head(e.key), `${e.key} is in the catalog`).not.toBeNull();
}

describe.each(MODES)('Compactor on %s', (mode) => {
  it('folds the parts of each window into one and every answer stays exactly the same', async () => {
    const h = await harness(mode);
    const days = [dayOf(H0)];
    const [base, ...late] = rounds(7);
    await h.writeAndFlush(base!);
    for (const r of late) await h.writeAndFlush(r);
    // Some late data stays hot: it must keep winning over the folded part.
    await h.write(late[0]!.slice(0, 40).map((s) => ({ ...s, fields: { v: 42, hot: 'yes' } })));
    await h.rollups.rollupAll(H0 - H, H0 + 3 * H);

    const from = H0 - H;
    const to = H0 + 3 * H;
    const before = await answers(h.warm, METRICS, from, to, SELECTORS);
    expect(await answers(h.query(), METRICS, from, to, SELECTORS)).toEqual(before);
    const parts = await windowsOf(h, days);
    expect(parts.size).toBe(4); // 2 shards × 2 windows
    for (const list of parts.values()) expect(list.length).toBe(4);
    const replaced = [...parts.values()].flat();

    const compactor = h.compactor();
    // Not settled yet: the window ended less than settleMs ago.
    h.clock.set(H0 + 2 * H + 9 * MIN);
    expect((await compactor.compactAll()).windows).toBe(2);
    h.clock.set(H0 + 2 * H + 10 * MIN);
    const stats = await compactor.compactAll();
    expect(stats.windows).toBe(2);
    expect(stats.partsIn).toBe(8);
    // (No byte claim here: sparse late fields mixed into regular series can cost more folded; see the bytes test.)

    const folded = await windowsOf(h, days);
    for (const list of folded.values()) expect(list.length).toBe(1);
    // The fold ranks after every part it replaced: this lease's fence, the next part number.
    for (const [k, [fold]] of folded) {
      const old = parts.get(k)!;
      expect(fold!.part).toBe(Math.max(...old.map((p) => p.part)) + 1);
      expect(fold!.fence).toBeGreaterThan(Math.max(...old.map((p) => p.fence)));
    }
    expect(await answers(h.warm, METRICS, from, to, SELECTORS)).toEqual(before);
    expect(await answers(h.query(), METRICS, from, to, SELECTORS)).toEqual(before);

    // Rollups are keyed by the window's part set: the fold made them stale, so aggregates came
    // from raw data above; the aggregation worker computes the folded windows' rollups again.
    const current = async () => {
      const rollupKeys = new Set<string>();
      for (const ref of h.refs()) for (const e of await h.rollupCatalogs.load(ref, days[0]!).then((c) => c.catalog.entries)) rollupKeys.add(e.key);
      return [...folded].filter(([k, [fold]]) => rollupKeys.has(currentRollupKey({ ns: h.ns, shard: Number(k.split('/')[0]) }, fold!.window, [fold!.key]))).length;
    };
    expect(await current()).toBe(0);
    expect((await h.rollups.rollupAll(H0 - H, H0 + 3 * H)).objects).toBeGreaterThan(0);
    expect(await current()).toBe(folded.size);
    expect(await answers(h.warm, METRICS, from, to, SELECTORS)).toEqual(before);

    // The replaced parts stay for the delete grace (readers may be using them), then go.
    for (const p of replaced) expect(await h.objects.head(p.key)).not.toBeNull();
    h.clock.set(H0 + 2 * H + 18 * MIN);
    expect((await compactor.compactAll()).deleted).toBe(0);
    h.clock.set(H0 + 2 * H + 21 * MIN);
    expect((await h.compactor().compactAll()).deleted).toBe(16);
    for (const p of replaced) expect(await h.objects.head(p.key)).toBeNull();
    expect([...(await h.segmentObjects()).keys()].sort()).toEqual([...folded.values()].flat().map((e) => e.key).sort());
    for (const ref of h.refs()) expect(await pendingOf(h, ref)).toEqual([]);
    expect(await answers(h.warm, METRICS, from, to, SELECTORS)).toEqual(before);
    expect(await answers(h.query(), METRICS, from, to, SELECTORS)).toEqual(before);

    // Late data after the fold is a newer part and wins over the folded one, before and after the next fold.
    const again = late[1]!.slice(0, 60).map((s) => ({ ...s, fields: { v: -7 } }));
    await h.writeAndFlush(again);
    const withLate = await answers(h.query(), METRICS, from, to, SELECTORS);
    expect(withLate).not.toEqual(before);
    h.clock.set(H0 + 2 * H + 40 * MIN);
    expect((await h.compactor().compactAll()).windows).toBeGreaterThan(0);
    expect(await answers(h.warm, METRICS, from, to, SELECTORS)).toEqual(withLate);
    const probe = again.at(-1)!;
    const got = [];
    for await (const s of h.query().query({ metric: probe.metric, tags: probe.tags, from: probe.ts, to: probe.ts + 1 })) got.push(s);
    expect(got[0]!.fields.v).toEqual([-7]);
  });

  it('folds a closed shard-day into one day object, answers stay exactly the same, late data after it wins and folds in again', async () => {
    const h = await harness(mode);
    const days = [dayOf(H0)];
    const [base, round2, , round4] = rounds(11);
    await h.writeAndFlush(base!);
    await h.writeAndFlush(round2!);
    await h.rollups.rollupAll(H0 - H, H0 + 3 * H);
    const from = H0 - H;
    const to = H0 + 3 * H;
    const before = await answers(h.warm, METRICS, from, to, SELECTORS);
    const hourParts = [...(await windowsOf(h, days)).values()].flat();
    const compactor = h.compactor();

    // The day is not closed until its late-data window (dayAfterMs, 2 h by default) has passed.
    h.clock.set(dayOf(H0) + 86_400_000 + 2 * H - 1);
    const early = await compactor.compactAll();
    expect(early.days).toBe(0);
    expect(early.windows).toBe(4);
    h.clock.set(dayOf(H0) + 86_400_000 + 2 * H);
    const stats = await compactor.compactAll();
    expect(stats.days).toBe(2); // one per shard
    for (const ref of h.refs()) {
      const entries = await h.entries(ref, days);
      expect(entries.map((e) => e.window).sort()).toEqual([H0, H0 + H]); // listed once per window it holds
      expect(new Set(entries.map((e) => e.key)).size).toBe(1);
      expect(isDaySegmentKey(entries[0]!.key)).toBe(true);
    }
    expect(await answers(h.warm, METRICS, from, to, SELECTORS)).toEqual(before);
    expect(await answers(h.query(), METRICS, from, to, SELECTORS)).toEqual(before);
    // Rollups follow (day objects of the rollups too) and answer the same.
    await h.rollups.rollupAll(H0 - H, H0 + 3 * H);
    expect(await answers(h.query(), METRICS, from, to, SELECTORS)).toEqual(before);

    // After the grace only the day objects are left.
    h.clock.set(h.clock.now() + 11 * MIN);
    expect((await compactor.compactAll()).deleted).toBe(new Set(hourParts.map((p) => p.key)).size + 4);
    const dayKeys = (await Promise.all(h.refs().map((ref) => h.entries(ref, days)))).flat().map((e) => e.key);
    expect([...(await h.segmentObjects()).keys()].sort()).toEqual([...new Set(dayKeys)].sort());

    // Late data for the closed day: a part ranking after the day object wins; the next pass folds the day again.
    const again = round4!.map((x) => ({ ...x, fields: { v: -9 } }));
    await h.writeAndFlush(again);
    const withLate = await answers(h.query(), METRICS, from, to, SELECTORS);
    expect(withLate).not.toEqual(before);
    const refold = await compactor.compactAll();
    expect(refold.days).toBe(2);
    expect(await answers(h.warm, METRICS, from, to, SELECTORS)).toEqual(withLate);
    expect(await answers(h.query(), METRICS, from, to, SELECTORS)).toEqual(withLate);
    h.clock.set(h.clock.now() + 11 * MIN);
    await compactor.compactAll();
    for (const ref of h.refs()) {
      expect(new Set((await h.entries(ref, days)).map((e) => e.key)).size).toBe(1);
      expect(await pendingOf(h, ref)).toEqual([]);
    }
    const orphans = await new OrphanSweeper(h.objects, h.catalogs, { ns: h.ns, shards: 2, graceMs: 0, clock: h.clock }).sweep();
    expect(orphans.pending + orphans.deleted).toBe(0);
  });

  /** A store that registers a copy of a window-H0 part as (fence, part) right before the fold's catalog write. */
  function registersDuringFold(h: Harness, position: (parts: CatalogEntry[]) => { fence: number; part: number }): ObjectStore {
    const ref = { ns: h.ns, shard: 0 };
    let done = false;
    return wrap(h.objects, async (key) => {
      if (done || !key.endsWith('.s4cat')) return;
      done = true;
      const parts = (await h.catalogs.load(ref, dayOf(H0))).catalog.entries.filter((e) => e.window === H0);
      const donor = parts[0]!;
      const at = position(parts);
      const copy = segmentKey(ref, H0, at.part, at.fence);
      const body = await h.objects.get(donor.key);
      await h.objects.put(copy, body && !body.notModified ? body.body : new Uint8Array());
      await h.catalogs.add(ref, { ...donor, ...at, key: copy });
    });
  }

  it('keeps a part registered during the fold under a newer lease: it ranks after the fold and still wins', async () => {
    const h = await harness(mode, 1);
    const ref = { ns: h.ns, shard: 0 };
    const [base, r2] = rounds(11);
    await h.writeAndFlush(base!);
    await h.writeAndFlush(r2!);
    const newer = await h.compactor({}, { objects: registersDuringFold(h, (parts) => ({ fence: 1_000_000, part: Math.max(...parts.map((p) => p.part)) + 1 })) }).compactAll();
    expect(newer.windows).toBe(2);
    expect(newer.aborted).toBe(0);
    const entries = (await h.entries(ref, [dayOf(H0)])).filter((e) => e.window === H0).sort((a, b) => a.fence - b.fence || a.part - b.part);
    expect(entries.map((e) => e.fence)).toEqual([expect.any(Number), 1_000_000]);
    await referencedExist(h, [dayOf(H0)]);
  });

  it('gives up a fold when a stale owner registers a part that ranks among the folded ones, and answers stay the same', async () => {
    const h = await harness(mode, 1);
    const ref = { ns: h.ns, shard: 0 };
    const [base, r2] = rounds(12);
    await h.writeAndFlush(base!);
    await h.writeAndFlush(r2!);
    // A flush whose lease was taken over registers late: its fence is the first part's, its number the highest.
    const objects = registersDuringFold(h, (parts) => ({ fence: Math.min(...parts.map((p) => p.fence)), part: Math.max(...parts.map((p) => p.part)) + 5 }));
    const stale = await h.compactor({}, { objects }).compactAll();
    expect(stale.aborted).toBe(1);
    expect(stale.windows).toBe(1); // the other window folded
    const windowH0 = (await h.entries(ref, [dayOf(H0)])).filter((e) => e.window === H0);
    expect(windowH0).toHaveLength(3);
    await referencedExist(h, [dayOf(H0)]);
    // The next pass folds all three; the unused upload and every replaced part are deleted after the grace.
    const before = await answers(h.query(), METRICS, H0, H0 + 2 * H);
    h.clock.set(H0 + 4 * H);
    expect((await h.compactor().compactAll()).windows).toBe(1);
    expect(await answers(h.query(), METRICS, H0, H0 + 2 * H)).toEqual(before);
    h.clock.set(H0 + 5 * H);
    await h.compactor().compactAll();
    const entries = await h.entries(ref, [dayOf(H0)]);
    expect(entries).toHaveLength(2);
    expect([...(await h.segmentObjects()).keys()].sort()).toEqual(entries.map((e) => e.key).sort());
    expect(await answers(h.query(), METRICS, H0, H0 + 2 * H)).toEqual(before);
  });

  it('drops the bytes of a window of many small late parts', async () => {
    const h = await harness(mode, 1);
    const ref = { ns: h.ns, shard: 0 };
    const r = rng(3);
    // 40 flushes of late data: 100 series, 5 samples each, on a 1 s grid.
    for (let p = 0; p < 40; p++) {
      const samples: Sample[] = [];
      for (let s = 0; s < 100; s++) for (let k = 0; k < 5; k++) samples.push({ metric: 'late', tags: { host: `h${s}` }, ts: H0 + (p * 5 + k) * 1000 + Math.floor(r() * 3) * 60_000, fields: { v: Math.round(r() * 1000) / 10 } });
      await h.writeAndFlush(samples);
    }
    const bytes = async () => [...(await h.segmentObjects()).values()].reduce((a, b) => a + b, 0);
    const before = await bytes();
    const q = await answers(h.query(), ['late'], H0, H0 + H);
    h.clock.set(H0 + 2 * H);
    const stats = await h.compactor().compactAll();
    expect(stats.partsIn).toBe(40);
    h.clock.set(H0 + 3 * H);
    await h.compactor().compactAll();
    const after = await bytes();
    expect((await h.entries(ref, [dayOf(H0)])).length).toBe(1);
    expect(await answers(h.query(), ['late'], H0, H0 + H)).toEqual(q);
    console.log(`[compactor ${mode}] 40 parts × 100 series × 5 samples: ${before} B → ${after} B (${(after / before).toFixed(3)}), ${(before / stats.samples).toFixed(1)} → ${(after / stats.samples).toFixed(1)} B/sample`);
    expect(after).toBeLessThan(before / 4);
  });
});

describe('Compactor pass', () => {
  it('folds every other shard when one fails, then reports the failure', async () => {
    const h = await harness('embedded', 2);
    const [base, r2] = rounds(4);
    await h.writeAndFlush(base!);
    await h.writeAndFlush(r2!);
    const broken: ObjectStore = { ...h.objects, get: async (k, o) => { if (k.includes('/seg/0000/')) throw new Error('disk on fire'); return h.objects.get(k, o); }, put: (k, b, c) => h.objects.put(k, b, c), head: (k) => h.objects.head(k), list: (p) => h.objects.list(p), delete: (k) => h.objects.delete(k), close: async () => undefined };
    await expect(h.compactor({}, { objects: broken }).compactAll()).rejects.toThrow(/compacting 1 of 2 shards .*disk on fire/);
    const [s0, s1] = await Promise.all(h.refs().map((ref) => h.entries(ref, [dayOf(H0)])));
    expect(s0).toHaveLength(4); // two windows, two parts each: untouched
    expect(s1).toHaveLength(2); // folded
    await referencedExist(h, [dayOf(H0)]);
  });
});

/**
 * Fault injection around the real adapters, at the n-th effect (PUT, DELETE, generation bump):
 * 'crash': the process dies before the effect (every later call fails, its lease is never released);
 * 'lost-reply': the effect happens, the caller gets an error and goes on;
 * 'retried-412': the effect happens and the client's retry of a conditional PUT meets its own write (412).
 */
type CrashKind = 'crash' | 'lost-reply' | 'retried-412';

class Crash {
  effects = 0;
  dead = false;
  constructor(
    private readonly at: number,
    private readonly kind: CrashKind,
  ) {}

  async effect<T>(run: () => Promise<T>, key = ''): Promise<T> {
    this.guard();
    if (++this.effects !== this.at) return run();
    if (this.kind === 'crash') {
      this.dead = true;
      throw new Error(`injected crash before effect ${this.at}`);
    }
    await run();
    if (this.kind === 'retried-412' && key) throw new PreconditionFailedError(key);
    throw new Error(`injected lost reply of effect ${this.at}`);
  }

  guard(): void {
    if (this.dead) throw new Error('this process has crashed');
  }

  store(inner: ObjectStore): ObjectStore {
    return {
      put: (k, b, c) => this.effect(() => inner.put(k, b, c), c ? k : ''),
      delete: (keys) => this.effect(() => inner.delete(keys)),
      get: async (k, o) => (this.guard(), inner.get(k, o)),
      head: async (k) => (this.guard(), inner.head(k)),
      list: (p) => (this.guard(), inner.list(p)),
      close: async () => undefined,
    };
  }

  hot(inner: HotTier): HotTier {
    return new Proxy(inner, {
      get: (target, prop, receiver) => {
        const v: unknown = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        const fn = v as (...args: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          if (prop === 'bumpGeneration') return this.effect(() => fn.apply(target, args));
          this.guard();
          return fn.apply(target, args);
        };
      },
    });
  }
}

/** The store as it is, with `before(key)` run before every PUT. */
function wrap(inner: ObjectStore, before: (key: string) => Promise<void>): ObjectStore {
  return {
    put: async (k, b, c) => (await before(k), inner.put(k, b, c)),
    delete: (keys) => inner.delete(keys),
    get: (k, o) => inner.get(k, o),
    head: (k) => inner.head(k),
    list: (p) => inner.list(p),
    close: async () => undefined,
  };
}

describe.each(MODES.flatMap((m) => [[m, 'window'] as const, [m, 'day'] as const]))('Compactor crash convergence on %s, %s fold', (mode, scenario) => {
  const days = [dayOf(H0)];
  const GRACE = 10 * MIN;
  const EFFECTS = 7;
  // A day fold needs the day closed: it ended S4_COMPACT_DAY_AFTER_MS (2 h) ago.
  const START = scenario === 'window' ? H0 + 3 * H : dayOf(H0) + 86_400_000 + 3 * H;

  /** window: one window of three parts; day: two windows of one part each (only a day fold to do). */
  async function prepared() {
    const h = await harness(mode, 1);
    // One fold: no later fold's generation bump may hide a missing one.
    if (scenario === 'window') for (const r of rounds(5).slice(0, 3)) await h.writeAndFlush(r.filter((x) => x.ts < H0 + H));
    else await h.writeAndFlush(rounds(5)[0]!);
    const expected = await answers(h.warm, METRICS, H0, H0 + 2 * H, SELECTORS.slice(0, 2), true);
    return { h, expected };
  }

  /** One fold pass, then a delete pass after the grace: the effects a crash may interrupt. */
  async function run(h: Harness, c: Compactor, start: number): Promise<void> {
    h.clock.set(start);
    await c.compactAll();
    h.clock.set(start + GRACE + 1);
    await c.compactAll();
  }

  it('counts the effects of a clean fold and delete', async () => {
    const { h, expected } = await prepared();
    const crash = new Crash(Infinity, 'crash');
    await run(h, h.compactor({ deleteGraceMs: GRACE }, { hot: crash.hot(h.hot), objects: crash.store(h.objects) }), START);
    // The fold: intent, upload, catalog, bump, timing (5); then one delete and one list update.
    expect(crash.effects).toBe(EFFECTS);
    expect(await answers(h.warm, METRICS, H0, H0 + 2 * H, SELECTORS.slice(0, 2), true)).toEqual(expected);
  });

  for (const kind of ['crash', 'lost-reply', 'retried-412'] as const) {
    // The day fold's commit shares the window fold's code paths: on S3 one kind keeps CI quick.
    if (scenario === 'day' && mode === 'redis+s3' && kind !== 'crash') continue;
    it(`converges after a ${kind} at every effect: data exact, nothing named missing, replaced parts deleted, no orphan`, { timeout: 180_000 }, async () => {
      for (let at = 1; at <= EFFECTS; at++) {
        const { h, expected } = await prepared();
        const crash = new Crash(at, kind);
        const ttl = 300; // a crashed process's lease expires on its own
        const crashing = h.compactor({ deleteGraceMs: GRACE, leaseTtlMs: ttl }, { hot: crash.hot(h.hot), objects: crash.store(h.objects) });
        const outcome = await run(h, crashing, START).then(() => 'finished', (e: unknown) => String(e));
        if (kind === 'crash') expect(outcome, `effect ${at}`).toMatch(/injected|crashed/);
        const check = async (label: string) => {
          await referencedExist(h, days);
          expect(await answers(h.warm, METRICS, H0, H0 + 2 * H, SELECTORS.slice(0, 2), true), `${kind} at ${at}, ${label}: warm caches`).toEqual(expected);
          expect(await answers(h.query(), METRICS, H0, H0 + 2 * H, SELECTORS.slice(0, 2), true), `${kind} at ${at}, ${label}: fresh`).toEqual(expected);
        };
        await check('right after');
        // A crashed process is replaced by a fresh compactor once its lease expired; a live one goes on.
        if (kind === 'crash' && mode === 'redis+s3') await sleep(ttl + 50);
        const next = kind === 'crash' ? h.compactor({ deleteGraceMs: GRACE }) : crashing;
        let t = h.clock.now() + 1000;
        for (let pass = 0; pass < 3; pass++) {
          h.clock.set(t);
          await next.compactAll();
          await check(`pass ${pass}`);
          t += GRACE + 1;
        }
        const ref = { ns: h.ns, shard: 0 };
        const entries = await h.entries(ref, days);
        expect(entries.map((e) => e.window).sort(), `${kind} at ${at}`).toEqual(scenario === 'window' ? [H0] : [H0, H0 + H]);
        const named = [...new Set(entries.map((e) => e.key))];
        expect(named.map(isDaySegmentKey), `${kind} at ${at}`).toEqual([scenario === 'day']);
        expect([...(await h.segmentObjects()).keys()].sort(), `${kind} at ${at}: no object left but what the catalog names`).toEqual(named);
        expect(await pendingOf(h, ref), `${kind} at ${at}`).toEqual([]);
        const orphans = await new OrphanSweeper(h.objects, h.catalogs, { ns: h.ns, shards: 1, graceMs: 0, clock: h.clock }).sweep();
        expect(orphans.pending + orphans.deleted).toBe(0);
        await h.close();
      }
    });
  }
});
