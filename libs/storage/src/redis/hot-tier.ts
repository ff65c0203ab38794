import { Cluster, Redis, type RedisOptions } from 'ioredis';
import {
  bulkTurn,
  LeaseLostError,
  WINDOW_MS,
  type HotAppend,
  type HotCursor,
  type HotLog,
  type HotScan,
  type HotTier,
  type HotTierStats,
  type Lease,
  type SeriesKey,
  type ShardRef,
  keyJson,
  requiredPairs,
  selects,
  selectsAll,
  type TagSelector,
} from '@s4/core';
import { RedisCardinalityStore } from './cardinality.js';
import { BulkScript, RespArgs } from './bulk-script.js';
import { hotTierError } from './faults.js';
import { ACQUIRE, APPEND, BUMP, RELEASE, RENEW, SCAN, SCAN_SERIES, SERIES, SHARD_STATS, UNLOCK } from './scripts.js';

type Arg = string | number | Buffer;
interface ScriptedRedis extends Redis {
  // Arguments go as one array (ioredis flattens it): spread, a request of many series overflows the call stack.
  s4release(prefix: string, args: Arg[]): Promise<number>;
  s4scanBuffer(prefix: string, ...args: Arg[]): Promise<(Buffer | number)[]>;
  s4seriesBuffer(prefix: string, ...args: Arg[]): Promise<(Buffer | number | false)[]>;
  s4scanseriesBuffer(prefix: string, args: Arg[]): Promise<(Buffer | number)[]>;
  s4acquire(prefix: string, owner: string, ttl: number): Promise<number | null>;
  s4renew(prefix: string, holder: string, ttl: number): Promise<number>;
  s4unlock(prefix: string, holder: string): Promise<number>;
  s4bump(prefix: string, holder: string): Promise<number>;
  s4shardstats(prefix: string): Promise<[number, number]>;
}

/** The key prefix of a shard; the braces make every key of the shard one Redis Cluster slot. */
export function shardPrefix(ref: ShardRef): string {
  return `s4:{${ref.ns}:${ref.shard}}:`;
}

/**
 * A window is read for flushing in MGETs of at most READ_SLICE logs and about READ_SLICE_BYTES of
 * them: Redis serves nothing else while it copies one reply, so a read of a window of large logs
 * (records: ~20 logs of 0.5-1 MB in a shard) in one MGET held every append behind it for 7-12 ms
 * at the median and ~75 ms at p99 (2 MiB: ~1 ms). Log sizes are not known before reading: the first MGET asks for
 * READ_FIRST logs, each next one for as many as the mean size so far says fit.
 */
const READ_SLICE = 1_000;
const READ_SLICE_BYTES = 2 * 1024 * 1024;
const READ_FIRST = 4;

/** An append entry's bytes beside its data, about (window, id, metric, series key, RESP headers): the first guess of a call's size. */
const APPEND_ENTRY_BYTES = 160;

/** How long an append's encoding of shard scripts may hold the event loop before requests get a turn. */
const APPEND_SLICE_MS = 10;

/** The APPEND script's arguments for one shard's entries: n, then (window, id, metric, series key, data) each. */
function appendArgs(list: readonly HotAppend[]): RespArgs {
  let size = 0;
  for (let i = 0; i < list.length; i++) size += list[i]!.data.length + APPEND_ENTRY_BYTES;
  const args = new RespArgs(size);
  args.number(list.length);
  for (let i = 0; i < list.length; i++) {
    const e = list[i]!;
    args.number(e.window);
    args.text(e.id);
    args.text(e.key.metric);
    args.text(keyJson(e.key));
    args.bytes(e.data);
  }
  return args;
}

/**
 * The tag = value pairs a selector requires (its tags, and `=` matchers of a non-empty value), as
 * the JSON text each is in a series key (`"k":"v"`, SERIES).
 */
function equalities(selector: TagSelector): string[] {
  return requiredPairs(selector).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
}

const holder = (lease: Lease) => `${lease.owner}|${lease.fence}`;

export interface RedisHotTierOptions extends RedisOptions {
  /** Redis Cluster, MemoryDB and ElastiCache Serverless endpoints. */
  cluster?: boolean;
  /** Connect timeout and per-command timeout (default 5000). */
  timeoutMs?: number;
  /** Connection failures (the client keeps reconnecting); default: one process warning per outage. */
  onConnectionError?: (error: Error) => void;
}

/** Reconnect delay: doubling from 50 ms, capped at 2 s so a returning server is found quickly, jittered so many clients do not reconnect in step. */
export function reconnectDelay(attempt: number): number {
  const base = Math.min(2_000, 50 * 2 ** Math.min(attempt - 1, 10));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/**
 * Hot tier on Redis, Valkey or MemoryDB. Appends of one shard are one atomic script call;
 * durability is the server's (appendfsync on Redis, the multi-AZ log on MemoryDB).
 *
 * No call waits for an outage to end: every command has a timeout, commands fail at once while
 * the client is disconnected (it reconnects forever in the background), and a command is sent
 * at most once, so a write the caller was told failed is never sent again behind its back.
 * Faults become UnavailableError (503 to API callers): reason `full` when Redis refuses writes
 * over maxmemory, `timeout`, or `unavailable`.
 */
export class RedisHotTier implements HotTier {
  /** Appends, releases, leases and admission: the write path's connection. */
  private readonly redis: ScriptedRedis;
  /**
   * Queries and health checks. ioredis sends a connection's commands in order, so on the writer's
   * connection a query waited behind every append script the HTTP thread had sent before it: on the
   * cardinality bench (40,000 series a round, 16 shard scripts per round, two rounds in flight) a
   * single-series query took 1.1 s at the median and `/readyz` 2.3 s at p99. On its own connection
   * it waits only for the script Redis is running.
   */
  private readonly reads: ScriptedRedis;

  /**
   * The queries' connection, or the writer's while it is down: each reconnects on its own jittered
   * backoff after an outage, and a query must not answer 503 while writes work again.
   */
  private reader(): ScriptedRedis {
    return this.reads.status === 'ready' ? this.reads : this.redis;
  }
  /**
   * An append call carries a request's bytes (~0.5 MB of records): encoded in one pass into one
   * buffer (BulkScript) and written straight to the socket, not copied once more into an
   * auto-pipeline's buffer (it is one command per shard anyway).
   */
  private readonly appendScript = new BulkScript(APPEND);
  private readonly timeoutMs: number;
  /**
   * Settles when the first connection attempt succeeds or fails. Calls made before that wait for
   * it (bounded) instead of failing while a healthy server is still being connected to at start.
   */
  private readonly firstAttempt: Promise<void>;
  private firstAttemptOver = false;

  /**
   * `cluster` for Redis Cluster, MemoryDB and ElastiCache Serverless endpoints: every key of a
   * shard hashes to one slot, so each script runs on the node that owns the shard.
   */
  constructor(url: string, options: RedisHotTierOptions = {}) {
    const { cluster, timeoutMs = 5_000, onConnectionError, ...redisOptions } = options;
    this.timeoutMs = timeoutMs;
    const common: RedisOptions = {
      enableAutoPipelining: true,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      // A server that stops answering (frozen, partitioned) has its connection torn down after
      // this long, so later commands fail at once instead of each waiting out its timeout.
      socketTimeout: timeoutMs,
      retryStrategy: reconnectDelay,
      // Fail rather than queue while disconnected, and never resend: with 0, commands in flight
      // when the connection drops are failed at once (ioredis flushes them on every reconnect
      // attempt), and without resending they are not replayed after a newer write of the caller.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      ...redisOptions,
    };
    const connect = (): Redis | Cluster => {
      let client: Redis | Cluster;
      if (cluster) {
        const u = new URL(url);
        client = new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], {
          dnsLookup: (address, callback) => callback(null, address),
          enableOfflineQueue: false,
          clusterRetryStrategy: reconnectDelay,
          slotsRefreshTimeout: timeoutMs,
          redisOptions: { ...common, username: u.username || undefined, password: common.password ?? (u.password || undefined), tls: u.protocol === 'rediss:' ? {} : undefined },
        });
      } else {
        client = new Redis(url, common);
      }
      client.defineCommand('s4release', { numberOfKeys: 1, lua: RELEASE });
      client.defineCommand('s4scan', { numberOfKeys: 1, lua: SCAN });
      client.defineCommand('s4series', { numberOfKeys: 1, lua: SERIES });
      client.defineCommand('s4scanseries', { numberOfKeys: 1, lua: SCAN_SERIES });
      client.defineCommand('s4acquire', { numberOfKeys: 1, lua: ACQUIRE });
      client.defineCommand('s4renew', { numberOfKeys: 1, lua: RENEW });
      client.defineCommand('s4unlock', { numberOfKeys: 1, lua: UNLOCK });
      client.defineCommand('s4bump', { numberOfKeys: 1, lua: BUMP });
      client.defineCommand('s4shardstats', { numberOfKeys: 1, lua: SHARD_STATS });
      return client;
    };
    const clients = [connect(), connect()];
    this.redis = clients[0] as unknown as ScriptedRedis;
    this.reads = clients[1] as unknown as ScriptedRedis;

    // One report per outage: the clients retry every couple of seconds and would repeat it each time.
    let reported = false;
    const report = onConnectionError ?? ((e: Error) => process.emitWarning(`hot tier connection failed, reconnecting until it is back: ${e.message}`));
    const firstAttempts = clients.map((client) => {
      client.on('error', (e: Error) => {
        if (reported) return;
        reported = true;
        report(e);
      });
      client.on('ready', () => (reported = false));
      return new Promise<void>((resolve) => {
        client.once('ready', resolve);
        client.once('error', resolve);
      });
    });
    this.firstAttempt = Promise.all(firstAttempts).then(() => {
      this.firstAttemptOver = true;
    });
  }

  /** Run one operation of the port: classified errors, and a bounded wait for the first connection. */
  private async run<T>(what: string, op: () => Promise<T>): Promise<T> {
    if (!this.firstAttemptOver) await within(this.firstAttempt, this.timeoutMs);
    try {
      return await op();
    } catch (e) {
      throw hotTierError(e, what);
    }
  }

  async append(entries: readonly HotAppend[]): Promise<void> {
    const byShard = new Map<string, HotAppend[]>();
    // The writer shares one ShardRef per shard across a request's appends: its prefix is made once.
    const prefixes = new Map<ShardRef, string>();
    for (const e of entries) {
      let p = prefixes.get(e.ref);
      if (p === undefined) prefixes.set(e.ref, (p = shardPrefix(e.ref)));
      let list = byShard.get(p);
      if (!list) byShard.set(p, (list = []));
      list.push(e);
    }
    await this.run('appending samples', async () => {
      const calls: Promise<unknown>[] = [];
      let since = performance.now();
      for (const [prefix, list] of byShard) {
        // A round of 40,000 series is ~150 ms of encoding: requests get a turn between shards.
        if (calls.length > 0 && performance.now() - since >= APPEND_SLICE_MS) {
          await bulkTurn();
          since = performance.now();
        }
        const call = this.appendScript.call(this.redis, prefix, appendArgs(list));
        call.catch(() => undefined); // handled at once: one that fails during a later turn must not end the process
        calls.push(call);
      }
      await Promise.all(calls);
    });
  }

  async openWindows(ref: ShardRef): Promise<number[]> {
    const ws = await this.run('listing hot windows', () => this.reader().zrange(`${shardPrefix(ref)}windows`, '0', '-1'));
    return ws.map(Number).sort((a, b) => a - b);
  }

  async readWindow(ref: ShardRef, window: number): Promise<HotLog[]> {
    return this.run('reading a hot window', async () => {
      const wp = `${shardPrefix(ref)}w:${window}:`;
      const meta = await this.redis.hgetall(`${wp}meta`);
      const ids = Object.keys(meta);
      if (ids.length === 0) return [];
      // One MGET per slice of keys and bytes, not one for the window: a single command over 100,000
      // logs, or over 20 MB of them, would hold Redis (every other client waits) and build one huge reply.
      const out: HotLog[] = [];
      let bytes = 0;
      for (let at = 0, count = READ_FIRST; at < ids.length; at += count) {
        if (at > 0) count = Math.max(1, Math.min(READ_SLICE, Math.floor((READ_SLICE_BYTES * at) / Math.max(1, bytes))));
        const slice = ids.slice(at, at + count);
        const logs = await this.redis.mgetBuffer(...slice.map((id) => `${wp}log:${id}`));
        slice.forEach((id, i) => {
          const data = logs[i];
          if (!data) return;
          bytes += data.length;
          out.push({ id, key: JSON.parse(meta[id]!) as SeriesKey, window, data });
        });
      }
      return out;
    });
  }

  async release(lease: Lease, window: number, cursors: readonly HotCursor[]): Promise<void> {
    const args: Arg[] = [holder(lease), window, cursors.length];
    for (const c of cursors) args.push(c.id, c.length);
    await this.run('releasing flushed samples', async () => {
      try {
        await this.redis.s4release(shardPrefix(lease.ref), args);
      } catch (e) {
        throw leaseError(e, lease);
      }
    });
  }

  async scan(ref: ShardRef, metric: string, from: number, to: number, series?: TagSelector): Promise<HotScan> {
    const first = Math.floor(from / WINDOW_MS) * WINDOW_MS;
    if (series && !selectsAll(series)) return this.scanSeries(ref, metric, first, to - 1, series);
    const reply = await this.run('reading hot samples', () => this.reader().s4scanBuffer(shardPrefix(ref), metric, first, to - 1));
    const generation = Number(reply[0]);
    const logs: HotLog[] = [];
    for (let i = 1; i + 3 < reply.length; i += 4) {
      const data = reply[i + 3];
      const key = reply[i + 2];
      if (!Buffer.isBuffer(data) || !Buffer.isBuffer(key)) continue;
      logs.push({ window: Number(reply[i]!.toString()), id: reply[i + 1]!.toString(), key: JSON.parse(key.toString()) as SeriesKey, data });
    }
    return { generation, logs };
  }

  /**
   * A scan of the series `selector` picks, in two calls: the metric's series keys (no log bytes),
   * then the chosen series' logs with the generation, atomically; the second only when the first
   * found a chosen series (each call reads the generation with what it lists). A series whose first log
   * appears between the two calls was not acknowledged before the scan began; one released
   * between them is in the catalog of the generation read with the logs.
   */
  private async scanSeries(ref: ShardRef, metric: string, firstWindow: number, lastMs: number, selector: TagSelector): Promise<HotScan> {
    return this.run('reading hot samples', async () => {
      const prefix = shardPrefix(ref);
      const { generation, keys } = await this.seriesKeys(prefix, metric, firstWindow, lastMs, equalities(selector));
      const args: Arg[] = [firstWindow, lastMs];
      for (const [id, key] of keys) if (selects(selector, key.tags)) args.push(id);
      // None of them hot: the generation read with the list completes the scan (most shards of a one-series query).
      if (args.length === 2) return { generation, logs: [] };
      const reply = await this.reader().s4scanseriesBuffer(prefix, args);
      const logs: HotLog[] = [];
      for (let i = 1; i + 2 < reply.length; i += 3) {
        const data = reply[i + 2];
        if (!Buffer.isBuffer(data)) continue;
        const id = reply[i + 1]!.toString();
        logs.push({ window: Number(reply[i]!.toString()), id, key: keys.get(id)!, data });
      }
      return { generation: Number(reply[0]), logs };
    });
  }

  /**
   * Series id → key of the series of `metric` in the windows from `firstWindow` through `lastMs`,
   * and the generation read with them; with `pairs` (equalities()), only those whose keys hold
   * them (callers still test each key against their whole selector).
   */
  private async seriesKeys(prefix: string, metric: string, firstWindow: number, lastMs: number, pairs: readonly string[] = []): Promise<{ generation: number; keys: Map<string, SeriesKey> }> {
    const reply = await this.reader().s4seriesBuffer(prefix, metric, firstWindow, lastMs, ...pairs);
    const out = new Map<string, SeriesKey>();
    for (let i = 1; i + 2 < reply.length; i += 3) {
      const json = reply[i + 2];
      if (!Buffer.isBuffer(json)) continue;
      const id = reply[i + 1]!.toString();
      if (!out.has(id)) out.set(id, JSON.parse(json.toString()) as SeriesKey);
    }
    return { generation: Number(reply[0]), keys: out };
  }

  async seriesIn(ref: ShardRef, metric: string | undefined, from: number, to: number): Promise<SeriesKey[]> {
    return this.run('listing hot series', async () => {
      const p = shardPrefix(ref);
      const first = Math.floor(from / WINDOW_MS) * WINDOW_MS;
      if (metric !== undefined) return [...(await this.seriesKeys(p, metric, first, to - 1)).keys.values()];
      const windows = await this.reader().zrangebyscore(`${p}windows`, first, to - 1);
      const out = new Map<string, SeriesKey>();
      for (const w of windows) {
        const meta = await this.reader().hgetall(`${p}w:${w}:meta`);
        for (const [id, json] of Object.entries(meta)) if (!out.has(id)) out.set(id, JSON.parse(json) as SeriesKey);
      }
      return [...out.values()];
    });
  }

  async bumpGeneration(lease: Lease): Promise<number> {
    return this.run('bumping the shard generation', async () => {
      try {
        return await this.redis.s4bump(shardPrefix(lease.ref), holder(lease));
      } catch (e) {
        throw leaseError(e, lease);
      }
    });
  }

  async generation(ref: ShardRef): Promise<number> {
    return Number((await this.run('reading the shard generation', () => this.reader().get(`${shardPrefix(ref)}gen`))) ?? 0);
  }

  async acquireLease(ref: ShardRef, owner: string, ttlMs: number): Promise<Lease | null> {
    const fence = await this.run('taking a shard lease', () => this.redis.s4acquire(shardPrefix(ref), owner, ttlMs));
    return fence === null ? null : { ref, owner, fence: Number(fence) };
  }

  async renewLease(lease: Lease, ttlMs: number): Promise<boolean> {
    return (await this.run('renewing a shard lease', () => this.redis.s4renew(shardPrefix(lease.ref), holder(lease), ttlMs))) === 1;
  }

  async releaseLease(lease: Lease): Promise<void> {
    await this.run('giving up a shard lease', () => this.redis.s4unlock(shardPrefix(lease.ref), holder(lease)));
  }

  async stats(): Promise<HotTierStats> {
    return this.run('reading hot-tier stats', async () => {
      const info = await this.reader().info('memory');
      const bytes = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
      return { bytes, logs: await this.reader().dbsize() };
    });
  }

  async shardStats(ref: ShardRef): Promise<HotTierStats> {
    const [bytes, logs] = await this.run('reading shard stats', () => this.reader().s4shardstats(shardPrefix(ref)));
    return { bytes: Number(bytes), logs: Number(logs) };
  }

  /** Series counters and limits on this connection (cardinality.ts), with the same timeouts and error classification. */
  cardinality(): RedisCardinalityStore {
    return new RedisCardinalityStore(this.redis, (what, op) => this.run(what, op));
  }

  async close(): Promise<void> {
    await Promise.all([quit(this.redis), quit(this.reads)]);
  }
}

async function quit(client: Redis): Promise<void> {
  // QUIT needs a live connection; without one there is nothing to say goodbye to.
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // fall through: drop the connection
    }
  }
  client.disconnect();
}

function leaseError(e: unknown, lease: Lease): unknown {
  return e instanceof Error && e.message.includes('S4LEASE') ? new LeaseLostError(`${lease.ref.ns}/${lease.ref.shard}`, lease.fence) : e;
}

/** Wait for `promise`, but no longer than `ms`; either way, carry on. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
