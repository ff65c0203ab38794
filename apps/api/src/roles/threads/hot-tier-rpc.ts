import type { MessagePort } from 'node:worker_threads';
import {
  UnavailableError,
  bulkTurn,
  nameMap,
  type HotAppend,
  type HotCursor,
  type HotLog,
  type HotLogPart,
  type HotScan,
  type HotTier,
  type HotTierStats,
  type Lease,
  type SeriesKey,
  type ShardRef,
  type TagSelector,
} from '@s4/core';
import { fromWire, toWire, type WireError } from './wire.js';

/**
 * The embedded hot tier (memory + log, one owner per directory) lives on the main thread. A worker
 * thread reaches it through this RPC over a MessagePort: the client implements the HotTier port by
 * posting `{id, method, args}`; the server runs the call on the real tier and posts the result or
 * the error back. With Redis, threads connect themselves and this is not used.
 *
 * Logs (readWindow, scan) are what a flush moves, and the serving side is the HTTP thread: they
 * cross in parts of at most LOGS_PER_PART logs or BYTES_PER_PART bytes, each part's bytes packed
 * into one transferred buffer, and the server yields to the event loop between parts, so a window
 * of 100,000 series never holds the HTTP thread for long. Other values cross by structured clone.
 */
const LOGS_PER_PART = 1_000;
const BYTES_PER_PART = 4 * 1024 * 1024;

const METHODS = [
  'append',
  'openWindows',
  'readWindow',
  'release',
  'scan',
  'seriesIn',
  'bumpGeneration',
  'generation',
  'acquireLease',
  'renewLease',
  'releaseLease',
  'stats',
  'shardStats',
] as const satisfies readonly (keyof HotTier)[];

type Method = (typeof METHODS)[number];

interface Call {
  readonly id: number;
  readonly method: Method;
  readonly args: unknown[];
}

/** Logs without their bytes, and the bytes of all of them in one buffer (`ends[i]`: where log i's bytes end). */
interface PackedLogs {
  readonly logs: { readonly id: string; readonly key: SeriesKey; readonly window: number }[];
  readonly ends: Uint32Array;
  readonly bytes: Uint8Array;
}

type Reply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: true; readonly part: PackedLogs; readonly last: boolean; readonly generation?: number }
  | { readonly id: number; readonly ok: false; readonly error: WireError };

/**
 * Main thread: answer one thread's calls on `tier`. `close` is never served (the main thread owns
 * the tier). Returns a function that stops serving and closes the port.
 */
export function serveHotTier(tier: HotTier, port: MessagePort): () => void {
  const allowed = new Set<string>(METHODS);
  let open = true;
  const answer = (reply: Reply, transfer: ArrayBuffer[] = []) => {
    if (!open) return;
    try {
      port.postMessage(reply, transfer);
    } catch (e) {
      port.postMessage({ id: reply.id, ok: false, error: toWire(e) } satisfies Reply);
    }
  };
  /** Logs as packed parts; a part is held until the next is packed, so that the last says so. */
  const answerLogs = async (id: number, chunks: AsyncIterable<readonly HotLog[]> | Iterable<readonly HotLog[]>, generation?: number) => {
    const send = (part: PackedLogs, last: boolean) =>
      answer({ id, ok: true, part, last, ...(last && generation !== undefined ? { generation } : {}) }, [part.bytes.buffer as ArrayBuffer]);
    let held: PackedLogs | undefined;
    for await (const logs of chunks)
      for (let i = 0; i < logs.length; ) {
        const part = pack(logs, i, (logs as HotLogPart).owned);
        i += part.logs.length;
        if (held) {
          send(held, false);
          await bulkTurn();
          if (!open) return;
        }
        held = part;
      }
    send(held ?? pack([], 0), true);
  };
  const serve = async (call: Call): Promise<void> => {
    if (!allowed.has(call.method)) throw new Error(`the hot tier has no method ${String(call.method)} over RPC`);
    if (call.method === 'readWindow') {
      const [ref, window] = call.args as [ShardRef, number];
      // Read part by part where the tier can: the HTTP thread then holds one part of a flush's
      // window, not all of it (a window of a busy shard is tens to hundreds of MB of records).
      const chunks = tier.readWindowParts ? tier.readWindowParts(ref, window, LOGS_PER_PART, BYTES_PER_PART) : [await tier.readWindow(ref, window)];
      return answerLogs(call.id, chunks);
    }
    const method = tier[call.method] as (...args: unknown[]) => Promise<unknown>;
    const value = await method.apply(tier, call.args);
    if (call.method === 'scan') await answerLogs(call.id, [(value as HotScan).logs], (value as HotScan).generation);
    else answer({ id: call.id, ok: true, value: compact(value) });
  };
  port.on('message', (call: Call) => {
    serve(call).catch((e: unknown) => answer({ id: call.id, ok: false, error: toWire(e) }));
  });
  return () => {
    open = false;
    port.close();
  };
}

/** Worker thread: the HotTier port, answered by the main thread's tier. */
export class HotTierClient implements HotTier {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void; logs: HotLog[] }>();
  private closed = false;

  constructor(private readonly port: MessagePort) {
    port.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      if (!reply.ok) {
        this.pending.delete(reply.id);
        waiter.reject(fromWire(reply.error));
      } else if ('part' in reply) {
        unpack(reply.part, waiter.logs);
        if (!reply.last) return;
        this.pending.delete(reply.id);
        waiter.resolve(reply.generation === undefined ? waiter.logs : ({ generation: reply.generation, logs: waiter.logs } satisfies HotScan));
      } else {
        this.pending.delete(reply.id);
        waiter.resolve(reply.value);
      }
    });
    port.on('close', () => this.fail('the main thread closed the hot-tier channel'));
  }

  private call<T>(method: Method, ...args: unknown[]): Promise<T> {
    if (this.closed) return Promise.reject(new UnavailableError('hot tier', 'the hot-tier channel to the main thread is closed'));
    return new Promise<T>((resolve, reject) => {
      const id = ++this.nextId;
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, logs: [] });
      try {
        this.port.postMessage({ id, method, args: compact(args) as unknown[] } satisfies Call);
      } catch (e) {
        this.pending.delete(id);
        reject(e);
      }
    });
  }

  private fail(why: string): void {
    this.closed = true;
    for (const w of this.pending.values()) w.reject(new UnavailableError('hot tier', why));
    this.pending.clear();
  }

  append(entries: readonly HotAppend[]): Promise<void> {
    return this.call('append', entries);
  }
  openWindows(ref: ShardRef): Promise<number[]> {
    return this.call('openWindows', ref);
  }
  readWindow(ref: ShardRef, window: number): Promise<HotLog[]> {
    return this.call('readWindow', ref, window);
  }
  release(lease: Lease, window: number, cursors: readonly HotCursor[]): Promise<void> {
    return this.call('release', lease, window, cursors);
  }
  scan(ref: ShardRef, metric: string, from: number, to: number, series?: TagSelector): Promise<HotScan> {
    return this.call('scan', ref, metric, from, to, series);
  }
  async seriesIn(ref: ShardRef, metric: string | undefined, from: number, to: number): Promise<SeriesKey[]> {
    return (await this.call<SeriesKey[]>('seriesIn', ref, metric, from, to)).map(withNameMap);
  }
  bumpGeneration(lease: Lease): Promise<number> {
    return this.call('bumpGeneration', lease);
  }
  generation(ref: ShardRef): Promise<number> {
    return this.call('generation', ref);
  }
  acquireLease(ref: ShardRef, owner: string, ttlMs: number): Promise<Lease | null> {
    return this.call('acquireLease', ref, owner, ttlMs);
  }
  renewLease(lease: Lease, ttlMs: number): Promise<boolean> {
    return this.call('renewLease', lease, ttlMs);
  }
  releaseLease(lease: Lease): Promise<void> {
    return this.call('releaseLease', lease);
  }
  stats(): Promise<HotTierStats> {
    return this.call('stats');
  }
  shardStats(ref: ShardRef): Promise<HotTierStats> {
    return this.call('shardStats', ref);
  }

  /** Closes the channel only; the tier itself belongs to the main thread. */
  async close(): Promise<void> {
    this.fail('the hot-tier client was closed');
    this.port.close();
  }
}

/** Logs from `start`, up to a part's limits, with their bytes copied into one buffer. */
function pack(logs: readonly HotLog[], start: number, owned?: ArrayBuffer): PackedLogs {
  let end = start;
  let total = 0;
  while (end < logs.length && end - start < LOGS_PER_PART && (end === start || total + logs[end]!.data.byteLength <= BYTES_PER_PART)) total += logs[end++]!.data.byteLength;
  const ends = new Uint32Array(end - start);
  const metas: PackedLogs['logs'] = [];
  let pos = 0;
  for (let i = start; i < end; i++) {
    const log = logs[i]!;
    pos += log.data.byteLength;
    ends[i - start] = pos;
    metas.push({ id: log.id, key: log.key, window: log.window });
  }
  return { logs: metas, ends, bytes: (owned && inPlace(logs, start, end, total, owned)) ?? copied(logs, start, end, total) };
}

/**
 * `owned` (a part's own buffer, HotLogPart) when it holds exactly these logs' bytes in order: sent
 * as it is, transferred rather than copied. Null otherwise.
 */
function inPlace(logs: readonly HotLog[], start: number, end: number, total: number, buffer: ArrayBuffer): Uint8Array | null {
  if (end === start || buffer.byteLength !== total) return null;
  let pos = 0;
  for (let i = start; i < end; i++) {
    const data = logs[i]!.data;
    if (data.buffer !== buffer || data.byteOffset !== pos) return null;
    pos += data.byteLength;
  }
  return new Uint8Array(buffer, 0, total);
}

function copied(logs: readonly HotLog[], start: number, end: number, total: number): Uint8Array {
  const bytes = new Uint8Array(total);
  let pos = 0;
  for (let i = start; i < end; i++) {
    bytes.set(logs[i]!.data, pos);
    pos += logs[i]!.data.byteLength;
  }
  return bytes;
}

function unpack(part: PackedLogs, into: HotLog[]): void {
  let pos = 0;
  for (let i = 0; i < part.logs.length; i++) {
    const { id, key, window } = part.logs[i]!;
    const end = part.ends[i]!;
    into.push({ id, key: withNameMap(key), window, data: part.bytes.subarray(pos, end) });
    pos = end;
  }
}

/** Tags cross as plain objects; S4 keeps user-named maps without a prototype (see nameMap). */
function withNameMap(key: SeriesKey): SeriesKey {
  return { ...key, tags: nameMap(Object.entries(key.tags)) };
}

/**
 * Structured clone copies a typed array's whole ArrayBuffer, so a small view into a large buffer
 * (a log chunk cut from the replayed file, a request body) would send the large buffer. Views
 * that do not span their buffer are copied to their own first.
 */
function compact(value: unknown, depth = 0): unknown {
  if (value instanceof Uint8Array) return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value : value.slice();
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const c = compact(v, depth + 1);
      if (c !== v) (out ??= value.slice())[i] = c;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value)) {
    const c = compact(v, depth + 1);
    if (c !== v) (out ??= { ...value })[k] = c;
  }
  return out ?? value;
}
