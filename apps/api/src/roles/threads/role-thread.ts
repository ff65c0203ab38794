import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import { S4Error, type HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { threadEntry } from './entry.js';
import { serveHotTier } from './hot-tier-rpc.js';
import { fromWire, type CallMethod, type FromThread, type PassStats, type ThreadData, type ToThread, type Trigger, type WorkerRole } from './wire.js';

/** The first restart waits this long; each further crash in a row doubles it, up to the max. */
const RESTART_MIN_MS = 2_000;
const RESTART_MAX_MS = 60_000;
/** A thread that ran this long before it ended starts the backoff over. */
const HEALTHY_MS = 60_000;
/** How long a stopping thread may take to finish its running pass before it is terminated. */
const STOP_TIMEOUT_MS = 120_000;
/**
 * Young generation of each role thread's heap. V8 sizes it from the machine's memory (192 MB on a
 * 24 GB host), and a pass that allocates a lot of short-lived garbage (decoded blocks, encoded
 * columns) fills it: three threads then hold ~380 MB of nursery between passes. With 32 MB the
 * cardinality bench's flush, compaction and rollup passes stayed within their run-to-run spread
 * (docs/benchmarks.md, "Levers tried").
 */
const YOUNG_GENERATION_MB = 32;

/** What the main thread learns from a role thread (the process wires it to its Metrics). */
const PASS_NAME: Record<WorkerRole, string> = { segment: 'flush', aggregate: 'aggregation', compact: 'compaction' };

export interface RoleThreadObserver {
  started(role: WorkerRole, threadId: number): void;
  ended(role: WorkerRole, threadId: number, unexpectedly: boolean): void;
  pass(role: WorkerRole, trigger: Trigger, stats: PassStats, ms: number): void;
  passFailed(role: WorkerRole, trigger: Trigger, error: Error): void;
  /** Object-store requests the thread made, per namespace. */
  usage?(requests: [string, { put: number; get: number }][]): void;
}

export interface RoleThreadOptions {
  readonly role: WorkerRole;
  readonly config: Config;
  /** The embedded hot tier this process owns, served to the thread over a MessagePort; null with Redis (the thread connects itself). */
  readonly hot: HotTier | null;
  /** Run the role's periodic pass and restart after a crash; false: a one-off thread for admin calls. */
  readonly periodic: boolean;
  readonly observer: RoleThreadObserver;
}

/**
 * The main thread's handle on one role's worker thread: starts it, forwards admin calls to it and
 * awaits their answers, restarts it with backoff when it dies, and stops it gracefully (the
 * running pass finishes first). Nothing a thread does can end the main process.
 */
export class RoleThread {
  /** The running thread's id (never 0, the main thread's); 0 while none is ready. */
  threadId = 0;
  /** Times the thread ended unexpectedly. */
  crashes = 0;
  private readonly entry: URL;
  private readonly log: Logger;
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private stopHotRpc: (() => void) | null = null;
  private lastError: Error | null = null;
  private startedAt = 0;
  private crashesInARow = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private firstOutcome: ((error?: Error) => void) | null = null;
  private readyWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private readonly pending = new Map<number, { method: CallMethod; resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private nextId = 0;

  constructor(private readonly options: RoleThreadOptions) {
    this.entry = threadEntry(options.role); // fails here, clearly, when the build is missing
    this.log = new Logger(`${options.role} thread`);
  }

  get role(): WorkerRole {
    return this.options.role;
  }

  /**
   * Start the thread. Resolves once it is ready; a periodic thread whose first start fails is
   * logged and retried in the background (the promise resolves), a one-off thread's rejects.
   */
  start(): Promise<void> {
    const outcome = new Promise<void>((resolve, reject) => {
      this.firstOutcome = (error) => (error && !this.options.periodic ? reject(error) : resolve());
    });
    this.spawn();
    return outcome;
  }

  /** Run an admin call in the thread and return its answer (waits for a thread that is starting). */
  async call<T>(method: CallMethod): Promise<T> {
    if (this.stopping) throw this.unavailable('is stopping');
    if (this.threadId === 0) await new Promise<void>((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
    const worker = this.worker;
    if (!worker) throw this.unavailable('is not running');
    return new Promise<T>((resolve, reject) => {
      const id = ++this.nextId;
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ type: 'call', id, method } satisfies ToThread);
    });
  }

  /** Stop: no new pass starts, the running one finishes, the thread closes its stores and ends. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.rejectWaiters(this.unavailable('is stopping'));
    const worker = this.worker;
    if (!worker) return;
    const timer = setTimeout(() => {
      this.log.warn(`thread ${worker.threadId} did not stop within ${STOP_TIMEOUT_MS} ms; terminating it`);
      void worker.terminate();
    }, STOP_TIMEOUT_MS);
    worker.postMessage({ type: 'stop' } satisfies ToThread);
    await this.exited;
    clearTimeout(timer);
  }

  /** End the thread abruptly, as a crash would: it is logged and restarted like one. */
  async terminate(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await worker.terminate();
    await this.exited;
  }

  private spawn(): void {
    this.restartTimer = null;
    const { role, config, hot, periodic } = this.options;
    let hotPort: MessagePort | null = null;
    if (hot) {
      const channel = new MessageChannel();
      this.stopHotRpc = serveHotTier(hot, channel.port1);
      hotPort = channel.port2;
    }
    const data: ThreadData = { role, config, periodic, hotPort };
    const worker = new Worker(this.entry, { workerData: data, transferList: hotPort ? [hotPort] : [], resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    this.worker = worker;
    this.startedAt = Date.now();
    this.lastError = null;
    worker.on('message', (m: FromThread) => this.onMessage(worker, m));
    worker.on('error', (e) => (this.lastError = e));
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        this.onExit(worker, code);
        resolve();
      }),
    );
  }

  private onMessage(worker: Worker, m: FromThread): void {
    const { role, observer } = this.options;
    switch (m.type) {
      case 'ready':
        this.threadId = m.threadId;
        observer.started(role, m.threadId);
        for (const w of this.readyWaiters.splice(0)) w.resolve();
        this.firstOutcome?.();
        this.firstOutcome = null;
        return;
      case 'reply': {
        const waiter = this.pending.get(m.id);
        if (!waiter) return;
        this.pending.delete(m.id);
        if (m.ok) waiter.resolve(m.value);
        else waiter.reject(fromWire(m.error));
        return;
      }
      case 'usage':
        observer.usage?.(m.requests);
        break;
      case 'pass':
        observer.pass(role, m.trigger, m.stats, m.ms);
        return;
      case 'pass-error': {
        const error = fromWire(m.error);
        this.log.error(`${m.trigger} ${PASS_NAME[role]} pass failed: ${error.stack ?? error.message}`);
        observer.passFailed(role, m.trigger, error);
        return;
      }
      case 'stopped':
        void worker.terminate();
        return;
    }
  }

  private onExit(worker: Worker, code: number): void {
    if (worker !== this.worker) return;
    const { role, observer, periodic } = this.options;
    const id = this.threadId || worker.threadId;
    const wasReady = this.threadId !== 0;
    this.worker = null;
    this.threadId = 0;
    this.stopHotRpc?.();
    this.stopHotRpc = null;
    const why = this.lastError ? (this.lastError.stack ?? this.lastError.message) : `exit code ${code}`;
    const error = this.unavailable(`ended (${this.lastError?.message ?? `exit code ${code}`})`);
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    if (wasReady) observer.ended(role, id, !this.stopping);
    if (this.stopping) return;
    if (!periodic) {
      this.rejectWaiters(error);
      this.firstOutcome?.(error);
      this.firstOutcome = null;
      if (!wasReady) this.log.error(`thread ${id} could not start: ${why}`);
      return;
    }
    this.crashes++;
    this.crashesInARow = Date.now() - this.startedAt >= HEALTHY_MS ? 1 : this.crashesInARow + 1;
    const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** (this.crashesInARow - 1));
    this.log.error(`thread ${id} ${wasReady ? 'ended unexpectedly' : 'could not start'} (${why}); restarting it in ${delay} ms`);
    // Calls waiting for a thread that could not start get an answer now rather than after the backoff.
    if (!wasReady) this.rejectWaiters(error);
    this.firstOutcome?.(error);
    this.firstOutcome = null;
    this.restartTimer = setTimeout(() => this.spawn(), delay);
  }

  private rejectWaiters(error: Error): void {
    for (const w of this.readyWaiters.splice(0)) w.reject(error);
  }

  private unavailable(what: string): S4Error {
    const next = this.options.periodic && !this.stopping ? 'it restarts by itself; retry shortly' : 'retry';
    return new S4Error('unavailable', `the ${this.options.role} worker thread ${what}; ${next}`, 503);
  }
}
