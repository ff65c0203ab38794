/**
 * The two stores every S4 process talks to. Each has an embedded adapter (memory + disk,
 * filesystem) and a production adapter (Redis-compatible, S3), proven equal by one contract suite.
 */
import type { ShardRef } from './keys.js';
import type { TagSelector } from './matchers.js';
import type { SeriesKey } from './model.js';

// ---------------------------------------------------------------- hot tier

/** Bytes to append to the log of one series in one hour window. */
export interface HotAppend {
  readonly ref: ShardRef;
  readonly window: number;
  readonly id: string;
  readonly key: SeriesKey;
  /** Concatenated self-delimiting records (see engine/records); opaque to the hot tier. */
  readonly data: Uint8Array;
  /**
   * A small number the writing process gave this series (the write path's mark, scan.ts), or
   * undefined: a hint, never trusted. At any one time no two series share one, but a number is
   * given to another series once the first is forgotten, so a hot tier may keep per number what
   * it found for `id` (checking `id` before using it) and skip a lookup keyed by the id string in
   * a map of every series (issue 12: ~3 µs a lookup at 1 M series). Never stored or sent.
   */
  readonly hint?: number;
}

/** The log of one series in one window, as read. `data.length` is the release cursor. */
export interface HotLog {
  readonly id: string;
  readonly key: SeriesKey;
  readonly window: number;
  readonly data: Uint8Array;
}

export interface HotCursor {
  readonly id: string;
  /** Bytes of the log that were flushed and may be dropped; later appends are kept. */
  readonly length: number;
}

export interface Lease {
  readonly ref: ShardRef;
  readonly owner: string;
  /** Strictly increasing per shard: a newer holder always has a larger fence. */
  readonly fence: number;
}

export interface HotScan {
  /**
   * The shard's catalog generation read atomically with the logs. Every flush bumps it after
   * registering a part and before releasing hot data, so a reader holding logs of generation g
   * and a catalog at least as new as g sees every sample at least once.
   */
  readonly generation: number;
  readonly logs: HotLog[];
}

/**
 * A part of a window's logs. `owned`: a buffer that holds exactly the part's bytes, log after log,
 * made for this part alone and referenced by nothing else, which the caller may therefore hand
 * over (transfer to another thread) instead of copying.
 */
export type HotLogPart = HotLog[] & { owned?: ArrayBuffer };

export interface HotTierStats {
  readonly bytes: number;
  readonly logs: number;
}

export interface HotTier {
  /** Resolves once every append is durable (survives a crash of this process). Atomic per shard. */
  append(entries: readonly HotAppend[]): Promise<void>;
  /** Window starts that still hold hot data for the shard, ascending. */
  openWindows(ref: ShardRef): Promise<number[]>;
  /** Every series log of one window of one shard (for flushing). */
  readWindow(ref: ShardRef, window: number): Promise<HotLog[]>;
  /**
   * `readWindow` in parts of at most `maxLogs` logs, and more than one log only within `maxBytes`
   * bytes, each read when it is taken (optional: the embedded tier, whose role threads take a
   * window through its RPC, so that the HTTP thread holds one part of a window, not the whole of it).
   */
  readWindowParts?(ref: ShardRef, window: number, maxLogs: number, maxBytes: number): AsyncIterable<HotLogPart>;
  /**
   * Drop the first `length` bytes of each log (what was flushed), if `lease` is still the
   * current holder; a window with no bytes left is closed. Throws LeaseLostError otherwise.
   */
  release(lease: Lease, window: number, cursors: readonly HotCursor[]): Promise<void>;
  /**
   * Logs of series of `metric` in windows overlapping [from, to), with the generation. With
   * `series`, only the logs of the series it selects (a query's tags and matchers): a query of
   * one series out of thousands moves that series' bytes, not the metric's. Which series are
   * selected may be decided before the logs are read; the logs and the generation are still
   * read atomically, so a log released between the two is found in the catalog of that generation.
   */
  scan(ref: ShardRef, metric: string, from: number, to: number, series?: TagSelector): Promise<HotScan>;
  /** Series of the shard in windows overlapping [from, to) (all metrics when metric is undefined). */
  seriesIn(ref: ShardRef, metric: string | undefined, from: number, to: number): Promise<SeriesKey[]>;
  /** Increment the catalog generation; only the current lease holder may. */
  bumpGeneration(lease: Lease): Promise<number>;
  generation(ref: ShardRef): Promise<number>;
  /** Take the shard's lease if free or expired; null if another owner holds it. */
  acquireLease(ref: ShardRef, owner: string, ttlMs: number): Promise<Lease | null>;
  /**
   * Extend a lease; false once it is lost. Its time running out only lets another owner take the
   * shard: until one does (the fence moves) or the holder gives it up, the lease is still its
   * holder's, so a holder whose thread stalled past the TTL on a long step carries on.
   */
  renewLease(lease: Lease, ttlMs: number): Promise<boolean>;
  /** Give the lease up: nobody renews it after this, so the next owner need not wait for its TTL. */
  releaseLease(lease: Lease): Promise<void>;
  stats(): Promise<HotTierStats>;
  /** Unflushed bytes and series logs of one shard (the health page; O(logs of the shard)). */
  shardStats(ref: ShardRef): Promise<HotTierStats>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- object store

export interface PutCondition {
  /** Write only if the object's current ETag is this one. */
  readonly ifMatch?: string;
  /** Write only if no object exists under the key. */
  readonly ifNoneMatch?: '*';
}

export interface GetOptions {
  /** Read `length` bytes from `offset` (a ranged GET). */
  readonly range?: { readonly offset: number; readonly length: number };
  /** Answer `notModified` instead of the body when the ETag still matches. */
  readonly ifNoneMatch?: string;
}

export type GetResult =
  | { readonly notModified: false; readonly body: Uint8Array; readonly etag: string; readonly size: number }
  | { readonly notModified: true; readonly etag: string };

export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
}

export interface ObjectStore {
  /** Throws PreconditionFailedError when a condition does not hold. */
  put(key: string, body: Uint8Array, condition?: PutCondition): Promise<{ etag: string }>;
  /** null when there is no such object. `size` is the whole object's size. */
  get(key: string, options?: GetOptions): Promise<GetResult | null>;
  head(key: string): Promise<{ size: number; etag: string } | null>;
  /** Every key under the prefix, in lexicographic order. Never on the query path. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  delete(keys: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- ingest log

/**
 * The pull ingest path (S4_INGEST=kafka): the API publishes validated, encoded appends to a
 * durable log partitioned by shard; the ingest role consumes each shard's partition and appends
 * to the hot tier. Production adapter: Kafka (libs/storage/src/kafka/).
 */
export interface IngestLog {
  /**
   * Resolves once the log durably holds every append (acknowledged by every in-sync replica),
   * in order per shard. Throws UnavailableError when the log does not answer in time; some
   * shards' appends may then be in the log already (a retry of the same write is harmless:
   * writes are idempotent).
   */
  publish(appends: readonly HotAppend[]): Promise<void>;
  /** Per shard of `ns`: messages in the log that the ingest role has not committed yet. */
  lag(ns: string): Promise<Map<number, number>>;
  close(): Promise<void>;
}

/** What the ingest role got from one shard's partition in one fetch. */
export interface IngestBatch {
  readonly ref: ShardRef;
  readonly appends: readonly HotAppend[];
}

export interface IngestConsumer {
  /**
   * Consume the partitions the group assigns to this consumer, one batch at a time per shard;
   * a batch's offsets are committed only after `handle` resolves (at-least-once delivery).
   */
  start(handle: (batch: IngestBatch) => Promise<void>): Promise<void>;
  /** The shards of each namespace assigned to this consumer now; null until it first joined. */
  assigned(): ReadonlyMap<string, readonly number[]> | null;
  close(): Promise<void>;
}
