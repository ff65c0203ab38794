import { DAY_MS, allShards, catalogKey, segmentShardPrefix, type FieldValue, type HotTier, type ObjectStore, type SeriesKey, type ShardRef } from '@s4/core';
import { decodeCatalog, type CatalogEntry } from '@s4/format';
import { CatalogStore, Compactor, Flusher, QueryEngine, RollupBuilder, Writer, parseWrite, type CompactorOptions } from '@s4/engine';
import { EmbeddedHotTier, FilesystemObjectStore, RedisHotTier } from '@s4/storage';
import { freshBucket, redisUrl, tempDir, uniqueNamespace } from './servers.js';

export const H = 3_600_000;
export const MIN = 60_000;

/** The two ways S4 runs: embedded hot tier + filesystem, or Redis + the S3 server. */
export type StoreMode = 'embedded' | 'redis+s3';

export interface Sample {
  readonly metric: string;
  readonly tags: Record<string, string>;
  readonly ts: number;
  readonly fields: Record<string, FieldValue>;
}

const LIMITS = { maxSamplesPerRequest: 1e7, maxFieldsPerSample: 20, maxTags: 10, maxTagLength: 100, maxFutureMs: 1e12, maxNestingDepth: 64 };

/**
 * A whole engine on real adapters, wired as a server wires it, with a clock the test moves (the
 * embedded hot tier's leases follow it too; Redis leases follow real time).
 */
export class Harness {
  readonly ns = uniqueNamespace();
  readonly catalogs: CatalogStore;
  readonly rollupCatalogs: CatalogStore;
  readonly writer: Writer;
  readonly flusher: Flusher;
  readonly rollups: RollupBuilder;
  /**
   * A query engine that lives through the whole test: it keeps its catalogs (revalidated when the
   * shard's generation moves) but no footers or blocks, so it reads every part it believes in.
   */
  readonly warm: QueryEngine;
  private closed = false;

  private constructor(
    readonly mode: StoreMode,
    readonly hot: HotTier,
    readonly objects: ObjectStore,
    readonly shards: number,
    readonly clock: { now(): number; set(t: number): void },
  ) {
    const opts = { ns: this.ns, shards };
    this.catalogs = new CatalogStore(objects);
    this.rollupCatalogs = new CatalogStore(objects, 'rollup');
    this.writer = new Writer(hot, { ...opts, maxRecordBytes: 1 << 20 });
    this.flusher = new Flusher(hot, objects, this.catalogs, { ...opts, owner: 'flusher', leaseTtlMs: 60_000, clock });
    this.rollups = new RollupBuilder(hot, objects, this.catalogs, this.rollupCatalogs, { ...opts, clock });
    this.warm = this.query(0);
  }

  static async open(mode: StoreMode, options: { shards?: number; start: number; realClock?: boolean }): Promise<Harness> {
    let now = options.start;
    const offset = options.start - Date.now();
    const clock = options.realClock
      ? { now: () => Date.now() + offset, set: () => { throw new Error('a real clock cannot be set'); } }
      : { now: () => now, set: (t: number) => void (now = t) };
    const shards = options.shards ?? 2;
    if (mode === 'embedded') {
      const dir = tempDir('compact');
      const hot = await EmbeddedHotTier.open({ dir: `${dir}/hot`, fsync: 'never', now: clock.now });
      return new Harness(mode, hot, new FilesystemObjectStore(`${dir}/objects`), shards, clock);
    }
    const { store } = await freshBucket();
    return new Harness(mode, new RedisHotTier(redisUrl()), store, shards, clock);
  }

  /** A fresh query engine: nothing cached. */
  query(cacheBytes = 1 << 24, objects: ObjectStore = this.objects): QueryEngine {
    return new QueryEngine(this.hot, objects, new CatalogStore(objects), { ns: this.ns, shards: this.shards, concurrency: 8, cacheBytes }, new CatalogStore(objects, 'rollup'), this.clock);
  }

  compactor(options: Partial<CompactorOptions> = {}, io: { hot?: HotTier; objects?: ObjectStore } = {}): Compactor {
    const objects = io.objects ?? this.objects;
    return new Compactor(io.hot ?? this.hot, objects, new CatalogStore(objects), {
      ns: this.ns,
      shards: this.shards,
      owner: `compactor-${Math.random().toString(36).slice(2, 8)}`,
      leaseTtlMs: 60_000,
      clock: this.clock,
      settleMs: 10 * MIN,
      deleteGraceMs: 10 * MIN,
      ...options,
    });
  }

  async write(samples: readonly Sample[]): Promise<void> {
    if (samples.length === 0) return;
    await this.writer.write(parseWrite({ kind: 'json', body: { samples: samples.map((s) => ({ ...s })) } }, LIMITS, this.clock.now()));
  }

  /** Write and flush at once: the samples become one more part of each window they touch. */
  async writeAndFlush(samples: readonly Sample[]): Promise<void> {
    await this.write(samples);
    const stats = await this.flusher.flushAll(this.clock.now());
    if (stats.busyShards > 0) throw new Error('a shard was busy during a test flush');
  }

  refs(): ShardRef[] {
    return allShards(this.shards).map((shard) => ({ ns: this.ns, shard }));
  }

  /** Every segment entry of every catalog of the shard, read fresh. */
  async entries(ref: ShardRef, days: readonly number[]): Promise<CatalogEntry[]> {
    const out: CatalogEntry[] = [];
    for (const day of days) {
      const got = await this.objects.get(catalogKey(ref, day));
      if (got && !got.notModified) out.push(...decodeCatalog(got.body).entries);
    }
    return out;
  }

  /** Segment objects in the store, with their sizes. */
  async segmentObjects(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const ref of this.refs()) for await (const o of this.objects.list(segmentShardPrefix(ref))) out.set(o.key, o.size);
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.hot.close();
    await this.objects.close();
  }
}

export const dayOf = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;

/** Every answer a user can get about `metrics` over [from, to), in a form `toEqual` compares exactly. */
export async function answers(q: QueryEngine, metrics: readonly string[], from: number, to: number, selectors: readonly Record<string, string>[] = [{}], light = false): Promise<unknown> {
  const steps = light ? [5 * MIN] : [MIN, 5 * MIN, H, 2 * H];
  const out: Record<string, unknown> = {};
  for (const metric of metrics) {
    for (const tags of selectors) {
      const at = `${metric} ${JSON.stringify(tags)}`;
      const raw = [];
      for await (const s of q.query({ metric, tags, from, to })) raw.push(s);
      out[`raw ${at}`] = raw;
      if (light) {
        for (const step of steps) out[`agg ${step} ${at}`] = roundAggs(await q.aggregate({ metric, tags, from, to, step, aggs: ['count', 'sum', 'last'] }));
        continue;
      }
      const narrow = [];
      for await (const s of q.query({ metric, tags, from: from + 7 * MIN, to: to - 13 * MIN, fields: ['v'] })) narrow.push(s);
      out[`raw v ${at}`] = narrow;
      out[`latest ${at}`] = await q.latest({ metric, tags, from, to });
      for (const step of steps) {
        out[`agg ${step} ${at}`] = roundAggs(await q.aggregate({ metric, tags, from, to, step, aggs: ['count', 'sum', 'min', 'max', 'first', 'last', 'avg'] }));
        out[`agg ${step} all ${at}`] = roundAggs(await q.aggregate({ metric, tags, from, to, step, aggs: ['count', 'sum', 'max'], groupBy: [] }));
      }
    }
    out[`series ${metric}`] = sortSeries(await q.series(metric, {}, from, to));
  }
  out['series *'] = sortSeries(await q.series(undefined, {}, from, to));
  return out;
}

/** Sums and averages from rollups and from raw data add in a different order: compare them to 12 digits. */
function roundAggs<T extends { fields: Record<string, (FieldValue | number | null)[]> }>(rows: T[]): T[] {
  return rows.map((r) => ({ ...r, fields: Object.fromEntries(Object.entries(r.fields).map(([f, col]) => [f, col.map((v) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toPrecision(12)) : v))])) }));
}

function sortSeries(list: SeriesKey[]): string[] {
  return list.map((s) => JSON.stringify([s.metric, Object.entries(s.tags).sort()])).sort();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
