import { DAY_MS, WINDOW_MS, allShards, currentDayRollupKey, currentRollupKey, isDayRollupKey, type Clock, type HotTier, type ShardRef } from '@s4/core';
import type { CatalogEntry } from '@s4/format';
import type { CatalogStore } from '../catalog/catalog-store.js';
import { mapLimit } from '../concurrency.js';

/**
 * The state of one shard as the health page shows it. Each concern is its own sub-object so that
 * later sources (Kafka partition lag, say) add a key without changing the ones already there.
 */
export interface ShardHealth {
  shard: number;
  hot: {
    /** Unflushed bytes held by the hot tier for this shard. */
    bytes: number;
    logs: number;
    /** Window starts still holding hot data, ascending. */
    windows: number[];
    /** Start of the oldest window still in the hot tier, or null. */
    oldestWindow: number | null;
  };
  flush: {
    /** Closed windows still in the hot tier (the flusher has work to do). */
    closedWindows: number;
    /** Milliseconds since the oldest closed hot window closed (0 when none is closed). */
    lagMs: number;
    /** When the newest part of the lookback was registered (by a flush, or a fold), or null. */
    lastAt: number | null;
    /** Window of that part. */
    lastWindow: number | null;
    /** How long after its window closed that part was registered. */
    lastLagMs: number | null;
  };
  compaction: {
    /** Windows with registered parts in the lookback. */
    windows: number;
    parts: number;
    bytes: number;
    maxPartsPerWindow: number;
    /** Windows with more than one part: each a fold the compactor still owes. */
    windowsWithDebt: number;
  };
  rollup: {
    /** Windows whose registered rollup matches their current parts. */
    fresh: number;
    /** Windows with parts and no rollup of exactly those parts (queries read raw there). */
    stale: number;
    /** Oldest stale window, or null. */
    oldestStale: number | null;
    /** When the newest rollup was registered, or null. */
    lastAt: number | null;
  };
}

export interface ShardHealthOptions {
  readonly ns: string;
  readonly shards: number;
  readonly clock: Clock;
  /** How far back catalogs are read (days overlapping [now - lookbackMs, now]). */
  readonly lookbackMs: number;
}

/**
 * Reads what the engine already keeps (the hot tier's windows and bytes, the segment and rollup
 * catalogs) into one ShardHealth per shard. Read-only; a few shards at a time so that a health
 * request never floods the stores.
 */
export class HealthReader {
  constructor(
    private readonly hot: HotTier,
    private readonly segments: CatalogStore,
    private readonly rollups: CatalogStore,
    private readonly options: ShardHealthOptions,
  ) {}

  get lookbackMs(): number {
    return this.options.lookbackMs;
  }

  async shards(): Promise<ShardHealth[]> {
    return mapLimit(allShards(this.options.shards), 4, (shard) => this.shard({ ns: this.options.ns, shard }));
  }

  async shard(ref: ShardRef): Promise<ShardHealth> {
    const now = this.options.clock.now();
    const [stats, windows, generation] = await Promise.all([this.hot.shardStats(ref), this.hot.openWindows(ref), this.hot.generation(ref)]);
    const closed = windows.filter((w) => w + WINDOW_MS <= now);
    const since = Math.floor((now - this.options.lookbackMs) / DAY_MS) * DAY_MS;
    const days = (await this.segments.days(ref, generation)).filter((d) => d >= since);

    const parts: CatalogEntry[] = [];
    const rollupKeys = new Set<string>();
    let rollupLastAt: number | null = null;
    for (const day of days) {
      parts.push(...(await this.segments.read(ref, day, generation)).entries);
      // Rollups do not move the generation, so their catalog is read fresh rather than from a cache.
      for (const e of (await this.rollups.load(ref, day)).catalog.entries) {
        rollupKeys.add(e.key);
        if (!isDayRollupKey(e.key)) rollupLastAt = Math.max(rollupLastAt ?? 0, e.createdAt);
      }
    }
    return {
      shard: ref.shard,
      hot: { bytes: stats.bytes, logs: stats.logs, windows, oldestWindow: windows[0] ?? null },
      flush: { closedWindows: closed.length, lagMs: closed.length ? now - (closed[0]! + WINDOW_MS) : 0, ...lastPart(parts) },
      compaction: debt(parts),
      rollup: { ...freshness(ref, parts, rollupKeys), lastAt: rollupLastAt },
    };
  }
}

function byWindow(parts: readonly CatalogEntry[]): Map<number, CatalogEntry[]> {
  const out = new Map<number, CatalogEntry[]>();
  for (const p of parts) {
    let list = out.get(p.window);
    if (!list) out.set(p.window, (list = []));
    list.push(p);
  }
  return out;
}

function lastPart(parts: readonly CatalogEntry[]): Pick<ShardHealth['flush'], 'lastAt' | 'lastWindow' | 'lastLagMs'> {
  let last: CatalogEntry | undefined;
  for (const p of parts) if (!last || p.createdAt > last.createdAt) last = p;
  return last ? { lastAt: last.createdAt, lastWindow: last.window, lastLagMs: last.createdAt - (last.window + WINDOW_MS) } : { lastAt: null, lastWindow: null, lastLagMs: null };
}

function debt(parts: readonly CatalogEntry[]): ShardHealth['compaction'] {
  const windows = byWindow(parts);
  let max = 0;
  let owed = 0;
  for (const list of windows.values()) {
    max = Math.max(max, list.length);
    if (list.length > 1) owed++;
  }
  return { windows: windows.size, parts: parts.length, bytes: parts.reduce((a, p) => a + p.size, 0), maxPartsPerWindow: max, windowsWithDebt: owed };
}

/**
 * The same test the rollup builder and the query planner use: a rollup is current when its key
 * hashes exactly the window's parts, or, once the builder folded the window's day, when the day
 * object's key hashes exactly the day's current hourly keys (its hourly objects are then gone).
 */
function freshness(ref: ShardRef, parts: readonly CatalogEntry[], rollupKeys: ReadonlySet<string>): Omit<ShardHealth['rollup'], 'lastAt'> {
  let fresh = 0;
  let stale = 0;
  let oldestStale: number | null = null;
  const hourly = new Map<number, string>();
  const byDay = new Map<number, string[]>();
  for (const [window, list] of byWindow(parts)) {
    const key = currentRollupKey(ref, window, list.map((p) => p.key));
    hourly.set(window, key);
    const day = Math.floor(window / DAY_MS) * DAY_MS;
    let keys = byDay.get(day);
    if (!keys) byDay.set(day, (keys = []));
    keys.push(key);
  }
  const daysFolded = new Set<number>();
  for (const [day, keys] of byDay) if (rollupKeys.has(currentDayRollupKey(ref, day, keys))) daysFolded.add(day);
  for (const [window, key] of hourly) {
    if (rollupKeys.has(key) || daysFolded.has(Math.floor(window / DAY_MS) * DAY_MS)) fresh++;
    else {
      stale++;
      oldestStale = oldestStale === null ? window : Math.min(oldestStale, window);
    }
  }
  return { fresh, stale, oldestStale };
}
