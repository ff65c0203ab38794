import { DAY_MS, LeaseLostError, WINDOW_MS, allShards, daySegmentKey, parseSegmentKey, segmentKey, type Clock, type HotTier, type Lease, type ObjectStore, type SeriesColumns, type ShardRef } from '@s4/core';
import { encodeSegment, type Catalog, type CatalogEntry, type PendingDelete, type SegmentSeriesInput } from '@s4/format';
import { entryOf, nextPart, type CatalogStore } from '../catalog/catalog-store.js';
import { mapLimit } from '../concurrency.js';
import { concatWindows } from '../columns/merge.js';
import { byPrecedence, foldParts, foldWindow, type Folded, type Position, type SegmentBytes } from './fold.js';
import { PendingDeletesStore, upsert } from './pending-deletes.js';
import { addCounts } from '../counts.js';
import type { Tombstone, TombstoneSource } from '../deletes/tombstones.js';

export interface CompactorOptions {
  readonly ns: string;
  readonly shards: number;
  /**
   * This process, as the flusher names it. The compactor takes shard leases as `<owner>/compact`:
   * a lease is re-entrant for its owner, and flush and fold of one shard must exclude each other
   * even inside one process.
   */
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  /** Fold a window once it has this many parts (default 2). */
  readonly minParts?: number;
  /**
   * Fold a window only once it ended this long ago (default 10 min: the flush grace of 5 min and
   * as much again), so the regular flushes of a window are done before it is folded.
   */
  readonly settleMs?: number;
  /**
   * Delete replaced parts only this long after readers were told the catalog changed (the
   * generation bump), so that queries already reading them finish (default 10 min).
   */
  readonly deleteGraceMs?: number;
  /** Look at days that end within this long before now (default 7 days). */
  readonly lookbackMs?: number;
  /** Shards compacted at once (default 2). Each folds one window at a time, held in memory. */
  readonly concurrency?: number;
  /** Deletes: a window with a part older than a tombstone touching it is rewritten without the deleted samples (one part suffices). */
  readonly tombstones?: TombstoneSource;
  /**
   * Fold a shard-day's parts into one day object once the day ended this long ago (default
   * 2 h: the late-data window); 0 turns day folds off.
   */
  readonly dayAfterMs?: number;
}

export interface CompactStats {
  /** Windows folded into one part. */
  windows: number;
  /** Shard-days folded into one day object. */
  days: number;
  /** Parts those windows had; `bytesIn` their size, `bytesOut` the size of the folded parts. */
  partsIn: number;
  bytesIn: number;
  bytesOut: number;
  samples: number;
  /** Replaced (or never committed) parts deleted after their grace period. */
  deleted: number;
  /** Folds given up because the catalog changed in a way the fold cannot keep (a stale lease). */
  aborted: number;
  /** Shards with work that another owner's lease kept this pass from. */
  busyShards: number;
}

export const COMPACT_DEFAULTS = {
  minParts: 2,
  settleMs: 600_000,
  deleteGraceMs: 600_000,
  lookbackMs: 7 * DAY_MS,
  concurrency: 2,
  dayAfterMs: 2 * 3_600_000,
} as const;

const empty = (): CompactStats => ({ windows: 0, days: 0, partsIn: 0, bytesIn: 0, bytesOut: 0, samples: 0, deleted: 0, aborted: 0, busyShards: 0 });

/**
 * The compactor's core: folds the parts of an hour window (the first flush plus late-data parts)
 * into one part, so that a query reads one object per shard-window and the store holds each
 * sample once. The commit protocol is in libs/format/docs/format/keys.md ("Fold"):
 *
 * 1. note the parts to fold and the new key in the shard's pending deletes (intent),
 * 2. upload the folded part under a new key (part above every registered one, this lease's fence),
 * 3. one compare-and-swap of the catalog replaces exactly the folded entries with the new one,
 *    provided no other part of the window ranks among them (`commitFold`),
 * 4. bump the shard's catalog generation, so readers re-read the catalog,
 * 5. give the replaced parts a delete time (now + grace); a later pass deletes them then, if no
 *    catalog names them.
 *
 * A crash anywhere leaves every sample readable and the next pass converges: intents whose keys
 * a catalog still names are dropped, the others are announced (bump) and timed; nothing a
 * catalog names is ever deleted.
 */
export class Compactor {
  private readonly pending: PendingDeletesStore;
  private readonly settings: Required<Omit<CompactorOptions, 'ns' | 'shards' | 'owner' | 'leaseTtlMs' | 'clock' | 'tombstones'>>;
  private readonly leaseOwner: string;

  constructor(
    private readonly hot: HotTier,
    private readonly objects: ObjectStore,
    private readonly catalogs: CatalogStore,
    private readonly options: CompactorOptions,
  ) {
    this.pending = new PendingDeletesStore(objects);
    this.leaseOwner = `${options.owner}/compact`;
    this.settings = {
      minParts: Math.max(2, options.minParts ?? COMPACT_DEFAULTS.minParts),
      settleMs: options.settleMs ?? COMPACT_DEFAULTS.settleMs,
      deleteGraceMs: options.deleteGraceMs ?? COMPACT_DEFAULTS.deleteGraceMs,
      lookbackMs: options.lookbackMs ?? COMPACT_DEFAULTS.lookbackMs,
      concurrency: options.concurrency ?? COMPACT_DEFAULTS.concurrency,
      dayAfterMs: options.dayAfterMs ?? COMPACT_DEFAULTS.dayAfterMs,
    };
  }

  /**
   * One pass over every shard: deletes that are due, then folds of settled windows. Call
   * periodically. A shard that fails does not stop the others; the first failure is thrown once
   * every shard had its turn.
   */
  async compactAll(): Promise<CompactStats> {
    const total = empty();
    const failures: unknown[] = [];
    const per = await mapLimit(allShards(this.options.shards), this.settings.concurrency, (shard) =>
      this.compactShard({ ns: this.options.ns, shard }).catch((e: unknown) => {
        failures.push(e);
        return empty();
      }),
    );
    for (const s of per) addCounts(total, s);
    if (failures.length > 0) {
      const first = failures[0] instanceof Error ? failures[0].message : String(failures[0]);
      throw new Error(`compacting ${failures.length} of ${this.options.shards} shards of ${this.options.ns}: ${first}`, { cause: failures[0] });
    }
    return total;
  }

  async compactShard(ref: ShardRef): Promise<CompactStats> {
    const stats = empty();
    const now = this.options.clock.now();
    const { windows, days } = await this.candidates(ref, now);
    const due = (await this.pending.read(ref)).some((p) => p.deleteAfter === null || p.deleteAfter <= now);
    if (windows.length === 0 && days.length === 0 && !due) return stats;
    const lease = await this.hot.acquireLease(ref, this.leaseOwner, this.options.leaseTtlMs);
    if (!lease) return { ...stats, busyShards: 1 };
    // Renewed in the background and checked before every commit, as the flusher does.
    let lost = false;
    const held = async () => !lost && (await this.hot.renewLease(lease, this.options.leaseTtlMs));
    const renewal = setInterval(() => {
      this.hot.renewLease(lease, this.options.leaseTtlMs).then(
        (ok) => (lost ||= !ok),
        () => undefined,
      );
    }, Math.max(100, Math.floor(this.options.leaseTtlMs / 3)));
    renewal.unref();
    try {
      if (due) stats.deleted += await this.collect(lease);
      for (const window of windows) {
        if (!(await held())) throw new LeaseLostError(`${ref.ns}/${ref.shard}`, lease.fence);
        addCounts(stats, await this.fold(lease, window, held));
      }
      for (const day of days) {
        if (!(await held())) throw new LeaseLostError(`${ref.ns}/${ref.shard}`, lease.fence);
        addCounts(stats, await this.foldDay(lease, day, held));
      }
    } catch (e) {
      // Another owner has the shard now; what this pass left half done, the next one settles.
      if (!(e instanceof LeaseLostError)) throw e;
      stats.busyShards++;
    } finally {
      clearInterval(renewal);
      await this.hot.releaseLease(lease);
    }
    return stats;
  }

  /**
   * Windows with enough parts that ended long enough ago, and closed days held by more than one
   * object, from the (cached) catalogs. A day is folded after its windows.
   */
  private async candidates(ref: ShardRef, now: number): Promise<{ windows: number[]; days: number[] }> {
    const generation = await this.hot.generation(ref);
    const windows: number[] = [];
    const days: number[] = [];
    for (const day of await this.catalogs.days(ref, generation)) {
      if (day + DAY_MS <= now - this.settings.lookbackMs) continue;
      const entries = (await this.catalogs.read(ref, day, generation)).entries;
      const counts = new Map<number, number>();
      for (const e of entries) counts.set(e.window, (counts.get(e.window) ?? 0) + 1);
      for (const [window, n] of counts) if (n >= this.settings.minParts && window + WINDOW_MS + this.settings.settleMs <= now) windows.push(window);
      if (this.settings.dayAfterMs > 0 && day + DAY_MS + this.settings.dayAfterMs <= now && new Set(entries.map((e) => e.key)).size > 1) days.push(day);
    }
    for (const w of await this.deletedWindows(ref, generation)) if (!windows.includes(w)) windows.push(w);
    return { windows: windows.sort((a, b) => a - b), days };
  }

  /**
   * Settle the shard's pending deletes: drop entries a catalog still names (their fold never
   * committed, or a rebuild registered them again); announce the rest with a generation bump and
   * time them; delete those whose time has come. Returns how many objects were deleted.
   */
  private async collect(lease: Lease): Promise<number> {
    const ref = lease.ref;
    const now = this.options.clock.now();
    const list = await this.pending.read(ref);
    const named = new Map<number, Set<string>>();
    const isNamed = async (key: string) => {
      const parsed = parseSegmentKey(key);
      if (!parsed) return false;
      const day = Math.floor(parsed.window / DAY_MS) * DAY_MS;
      let keys = named.get(day);
      if (!keys) named.set(day, (keys = new Set((await this.catalogs.load(ref, day)).catalog.entries.map((e) => e.key))));
      return keys.has(key);
    };
    const drop: PendingDelete[] = [];
    const arm: PendingDelete[] = [];
    const remove: PendingDelete[] = [];
    for (const p of list) {
      if (p.deleteAfter !== null && p.deleteAfter > now) continue;
      if (await isNamed(p.key)) drop.push(p);
      else if (p.deleteAfter === null) arm.push(p);
      else remove.push(p);
    }
    let deadline = 0;
    if (arm.length > 0) {
      // The fold that wrote these committed (or never will): tell readers before the grace starts.
      await this.hot.bumpGeneration(lease);
      deadline = this.options.clock.now() + this.settings.deleteGraceMs;
    }
    if (remove.length > 0) await this.objects.delete(remove.map((p) => p.key));
    if (drop.length + arm.length + remove.length === 0) return 0;
    // Only entries still exactly as judged are changed: one rewritten meanwhile is judged next pass.
    const same = (a: PendingDelete, b: PendingDelete | undefined) => b !== undefined && a.deleteAfter === b.deleteAfter;
    const gone = new Map([...drop, ...remove].map((p) => [p.key, p]));
    const armed = new Map(arm.map((p) => [p.key, p]));
    await this.pending.update(ref, (current) =>
      current
        .filter((p) => !same(p, gone.get(p.key)))
        .map((p) => (same(p, armed.get(p.key)) ? { key: p.key, deleteAfter: deadline } : p)),
    );
    return remove.length;
  }

  /**
   * Tombstones deleted every sample of a window: its parts leave the catalog with no part in
   * their place (the same protocol as a fold, without an upload).
   */
  private async dropWindow(lease: Lease, day: number, parts: readonly CatalogEntry[], held: () => Promise<boolean>): Promise<CompactStats> {
    const ref = lease.ref;
    const replaced = new Set(parts.map((p) => p.key));
    await this.pending.update(ref, (current) => upsert(current, replaced, null));
    if (!(await held())) throw new LeaseLostError(`${ref.ns}/${ref.shard}`, lease.fence);
    const done = await this.catalogs.update(ref, day, (current) => {
      const listed = current.entries.filter((e) => replaced.has(e.key));
      return listed.length === replaced.size ? { ...current, entries: current.entries.filter((e) => !replaced.has(e.key)) } : null;
    });
    if (done === null) return { ...empty(), aborted: 1 };
    await this.hot.bumpGeneration(lease);
    const deadline = this.options.clock.now() + this.settings.deleteGraceMs;
    await this.pending.update(ref, (current) => current.map((p) => (replaced.has(p.key) && p.deleteAfter === null ? { key: p.key, deleteAfter: deadline } : p)));
    return { ...empty(), windows: 1, partsIn: parts.length, bytesIn: parts.reduce((n, p) => n + p.size, 0) };
  }

  /** Windows (of any age) with parts a tombstone has yet to be applied to. */
  private async deletedWindows(ref: ShardRef, generation: number): Promise<number[]> {
    const tombstones = this.options.tombstones ? await this.options.tombstones.list(ref.ns) : [];
    if (tombstones.length === 0) return [];
    const out = new Set<number>();
    const now = this.options.clock.now();
    for (const day of await this.catalogs.days(ref, generation)) {
      if (!tombstones.some((t) => t.from < day + DAY_MS && t.to > day)) continue;
      for (const e of (await this.catalogs.read(ref, day, generation)).entries)
        if (e.window + WINDOW_MS + this.settings.settleMs <= now && pendingTombstones(tombstones, [e]).length > 0) out.add(e.window);
    }
    return [...out];
  }

  private async deletedIn(ref: ShardRef, parts: readonly CatalogEntry[]): Promise<Tombstone[]> {
    return this.options.tombstones ? pendingTombstones(await this.options.tombstones.list(ref.ns), parts) : [];
  }

  /** Fold every part of one window into one new part (keys.md, "Fold"). */
  private async fold(lease: Lease, window: number, held: () => Promise<boolean>): Promise<CompactStats> {
    const stats = empty();
    const ref = lease.ref;
    const day = Math.floor(window / DAY_MS) * DAY_MS;
    const { catalog } = await this.catalogs.load(ref, day);
    const parts = catalog.entries.filter((e) => e.window === window).sort(byPrecedence);
    const deleted = await this.deletedIn(ref, parts);
    if (parts.length < this.settings.minParts && deleted.length === 0) return stats;
    const at: Position = { fence: lease.fence, part: nextPart(catalog, window) };
    // A part written under a newer lease than ours: we are a stale owner and must not rank above it.
    if (!parts.every((p) => byPrecedence(p, at) < 0)) return { ...stats, aborted: 1 };
    const key = segmentKey(ref, window, at.part, at.fence);
    const folded = await foldWindow(this.objects, parts, 4, deleted);
    if (folded.series.length === 0) return this.dropWindow(lease, day, parts, held);
    const bytes = encodeSegment({ ns: ref.ns, shard: ref.shard, window, series: folded.series });
    const span = folded.span();
    const replaced = new Set(parts.map((p) => p.key));

    // 1. Intent: whatever happens next, a later pass finds these keys and settles them.
    await this.pending.update(ref, (current) => upsert(current, [...replaced, key], null));
    // 2. Upload: invisible until the catalog names it.
    await this.objects.put(key, bytes);
    // 3. Commit: one compare-and-swap replaces exactly the folded entries.
    if (!(await held())) throw new LeaseLostError(`${ref.ns}/${ref.shard}`, lease.fence);
    const entry = entryOf(key, bytes, { window, part: at.part, fence: at.fence, series: folded.series, ...span, createdAt: this.options.clock.now() });
    const verdict = { is: 'changed' as Verdict };
    await this.catalogs.update(ref, day, (current) => {
      verdict.is = commitFold(current, window, replaced, entry);
      // Only this window's entries: a day object folded here is still listed for its other windows.
      return verdict.is === 'committed' ? { ...current, entries: [...current.entries.filter((e) => !(e.window === window && replaced.has(e.key))), entry] } : null;
    });
    // Left as an intent when the catalog changed: a later pass deletes the unused upload.
    if (verdict.is === 'changed') return { ...stats, aborted: 1 };
    // 4. Announce: readers holding the old catalog re-read it.
    await this.hot.bumpGeneration(lease);
    // 5. Time the deletes; the new key is named by the catalog and leaves the list.
    const deadline = this.options.clock.now() + this.settings.deleteGraceMs;
    await this.pending.update(ref, (current) =>
      current.filter((p) => p.key !== key).map((p) => (replaced.has(p.key) && p.deleteAfter === null ? { key: p.key, deleteAfter: deadline } : p)),
    );
    return { ...stats, windows: 1, partsIn: parts.length, bytesIn: parts.reduce((n, p) => n + p.size, 0), bytesOut: bytes.length, samples: span.samples };
  }

  /**
   * Fold every entry of a closed shard-day into one day object (keys.md, "Day fold"): the same
   * intent → upload → compare-and-swap → announce → timed deletes as a window fold. The commit
   * needs the day's catalog to list exactly the folded entries; anything registered meanwhile
   * makes it give up (the next pass folds again).
   */
  private async foldDay(lease: Lease, day: number, held: () => Promise<boolean>): Promise<CompactStats> {
    const stats = empty();
    const ref = lease.ref;
    const { catalog } = await this.catalogs.load(ref, day);
    const entries = catalog.entries;
    const replaced = new Set(entries.map((e) => e.key));
    if (replaced.size < 2) return stats;
    const windows = [...new Set(entries.map((e) => e.window))].sort((a, b) => a - b);
    const at: Position = { fence: lease.fence, part: Math.max(...windows.map((w) => nextPart(catalog, w))) };
    if (!entries.every((e) => byPrecedence(e, at) < 0)) return { ...stats, aborted: 1 };
    const key = daySegmentKey(ref, day, at.part, at.fence);

    // Per window, its entries merged in precedence order (a day object read once, clipped per window).
    const reads = new Map<string, Promise<SegmentBytes>>();
    const deleted = await this.deletedIn(ref, entries);
    const perWindow: Folded[] = [];
    for (const w of windows) perWindow.push(await foldParts(this.objects, entries.filter((e) => e.window === w), 4, deleted, reads));
    const bySeries = new Map<string, { metric: string; tags: Record<string, string>; parts: SeriesColumns[] }>();
    for (const f of perWindow)
      for (const s of f.series) {
        let e = bySeries.get(s.id);
        if (!e) bySeries.set(s.id, (e = { metric: s.metric, tags: s.tags, parts: [] }));
        e.parts.push({ ts: s.ts, fields: s.fields });
      }
    const series: SegmentSeriesInput[] = [...bySeries]
      .map(([id, e]) => {
        const all = concatWindows(e.parts);
        return { id, metric: e.metric, tags: e.tags, ts: all.ts, fields: all.fields };
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const bytes = encodeSegment({ ns: ref.ns, shard: ref.shard, window: day, series });
    const createdAt = this.options.clock.now();
    const listed = windows.flatMap((w, i) => {
      const f = perWindow[i]!;
      if (f.series.length === 0) return [];
      return [entryOf(key, bytes, { window: w, part: at.part, fence: at.fence, series: f.series, samples: f.samples, minTs: f.minTs, maxTs: f.maxTs, createdAt })];
    });
    const pairs = (list: readonly CatalogEntry[]) => new Set(list.map((e) => `${e.window}\u0000${e.key}`));
    const folded = pairs(entries);

    await this.pending.update(ref, (current) => upsert(current, [...replaced, key], null));
    await this.objects.put(key, bytes);
    if (!(await held())) throw new LeaseLostError(`${ref.ns}/${ref.shard}`, lease.fence);
    const verdict = { is: 'changed' as Verdict };
    await this.catalogs.update(ref, day, (current) => {
      const now = pairs(current.entries);
      if (current.entries.some((e) => e.key === key)) verdict.is = 'already';
      else verdict.is = now.size === folded.size && [...now].every((p) => folded.has(p)) ? 'committed' : 'changed';
      return verdict.is === 'committed' ? { ...current, entries: listed } : null;
    });
    if (verdict.is === 'changed') return { ...stats, aborted: 1 };
    await this.hot.bumpGeneration(lease);
    const deadline = this.options.clock.now() + this.settings.deleteGraceMs;
    await this.pending.update(ref, (current) =>
      current.filter((p) => p.key !== key).map((p) => (replaced.has(p.key) && p.deleteAfter === null ? { key: p.key, deleteAfter: deadline } : p)),
    );
    const samples = series.reduce((n, s) => n + s.ts.length, 0);
    return { ...stats, days: 1, partsIn: replaced.size, bytesIn: [...new Map(entries.map((e) => [e.key, e.size])).values()].reduce((a, b) => a + b, 0), bytesOut: bytes.length, samples };
  }
}

type Verdict = 'committed' | 'already' | 'changed';

/** Tombstones that still have samples to take out of some of these parts (a part older than the tombstone, overlapping it). */
function pendingTombstones(tombstones: readonly Tombstone[], parts: readonly CatalogEntry[]): Tombstone[] {
  return tombstones.filter((t) => parts.some((p) => p.createdAt < t.createdAt && p.minTs < t.to && p.maxTs >= t.from && (p.metrics === null || p.metrics.includes(t.metric))));
}

/**
 * Whether a fold may commit onto `current`: every folded part is still listed, and no other part
 * of the window ranks between the first folded part and the fold. A part ranking after the fold
 * (registered meanwhile under a newer lease) keeps winning over the folded data as it did over
 * the parts; one ranking before them all keeps losing to them. One in between (a stale owner's)
 * would change answers: the fold gives up. ('already': a retried write of this very fold landed.)
 */
function commitFold(current: Catalog, window: number, replaced: ReadonlySet<string>, fold: CatalogEntry): Verdict {
  const inWindow = current.entries.filter((e) => e.window === window);
  if (inWindow.some((e) => e.key === fold.key)) return 'already';
  const folded = inWindow.filter((e) => replaced.has(e.key)).sort(byPrecedence);
  if (folded.length !== replaced.size) return 'changed';
  const first = folded[0]!;
  for (const e of inWindow) if (!replaced.has(e.key) && byPrecedence(e, first) > 0 && byPrecedence(e, fold) < 0) return 'changed';
  return 'committed';
}

