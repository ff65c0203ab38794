import { setPriority } from 'node:os';
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { systemClock, type Clock, type HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { PeriodicWorker } from '@s4/engine';
import { REQUESTS, openRedisHotTier } from '../../stores.js';
import { HeapRelease } from './heap-release.js';
import { HotTierClient } from './hot-tier-rpc.js';
import { toWire, type CallMethod, type FromThread, type PassStats, type ThreadData, type ToThread, type Trigger } from './wire.js';

/**
 * Nice value of a role thread. On Linux the nice value is per thread, so a pass (encoding a window,
 * folding parts, rolling up) that wants the same core as the HTTP thread gets about a third of its
 * share instead of half, and `/readyz` and small queries stay fast while it runs; on an idle core
 * the pass runs at full speed. Elsewhere setpriority would renice the whole process, so it is left.
 */
const ROLE_THREAD_NICE = 5;

/** Pause before the next periodic pass when the last one left a backlog: the thread's other calls and the event loop get a turn. */
const SOON_MS = 1_000;

/** What a role's composition root hands to its thread. */
export interface RoleWork {
  /** Time between two periodic passes. */
  readonly intervalMs: number;
  /** One pass: 'periodic' with the role's own window (grace, look-back), 'admin' over everything now. */
  pass(trigger: Trigger): Promise<PassStats>;
  /** Whether a periodic pass left a backlog, so the next one runs after SOON_MS instead of `intervalMs`. */
  backlog?(stats: PassStats): boolean;
  /** Admin calls other than the pass. */
  readonly calls?: Partial<Record<Exclude<CallMethod, 'pass'>, () => Promise<unknown>>>;
  /** Close what the root opened (object-store client); the host closes the hot tier. */
  close(): Promise<void>;
}

/**
 * The body of every role thread: build the role's composition root from the config in
 * `workerData`, run its periodic pass, answer admin calls from the main thread, report every
 * pass (and every failed periodic pass) to the main thread's metrics, and stop on request after
 * the running pass ends.
 */
export async function runRoleThread(build: (config: Config, hot: HotTier, clock: Clock) => Promise<RoleWork> | RoleWork): Promise<void> {
  const port = parentPort;
  if (isMainThread || !port) throw new Error('a role thread entry runs in a worker thread; the server starts it (apps/api/src/roles/threads/role-thread.ts)');
  const data = workerData as ThreadData;
  if (process.platform === 'linux')
    try {
      setPriority(ROLE_THREAD_NICE); // this thread only (pid 0 = the calling thread on Linux)
    } catch {
      // A sandbox that refuses setpriority: the thread runs at the process's priority, as before.
    }
  const config = Object.freeze(data.config);
  const clock = systemClock;
  const hot: HotTier = data.hotPort ? new HotTierClient(data.hotPort) : await openRedisHotTier(config);
  const post = (m: FromThread) => port.postMessage(m);

  let work: RoleWork;
  try {
    work = await build(config, hot, clock);
  } catch (e) {
    await hot.close();
    throw e;
  }

  const heap = new HeapRelease();
  const pass = async (trigger: Trigger): Promise<{ stats: PassStats; ms: number }> => {
    const started = performance.now();
    try {
      const stats = await work.pass(trigger);
      const ms = performance.now() - started;
      post({ type: 'pass', trigger, stats, ms });
      return { stats, ms };
    } finally {
      // The requests of the pass (and of the background work since the last one) for the cost report.
      const requests = REQUESTS.take();
      if (requests.length > 0) post({ type: 'usage', requests });
    }
  };
  const periodic = data.periodic
    ? new PeriodicWorker(
        work.intervalMs,
        async () => {
          const { stats, ms } = await pass('periodic');
          const backlog = work.backlog?.(stats) ?? false;
          // Going idle until the next interval: give back what the pass left (a backlog pass follows in a second).
          if (!backlog) heap.afterPass(ms);
          return backlog;
        },
        (e) => post({ type: 'pass-error', trigger: 'periodic', error: toWire(e) }),
        SOON_MS,
      )
    : null;

  const inflight = new Set<Promise<void>>();
  let stopping: Promise<void> | null = null;
  const stop = async () => {
    await periodic?.stop();
    while (inflight.size > 0) await Promise.allSettled([...inflight]);
    await work.close();
    await hot.close();
    post({ type: 'stopped' });
    port.close();
  };
  port.on('message', (m: ToThread) => {
    if (m.type === 'stop') {
      stopping ??= stop();
      return;
    }
    const adminPass = async () => {
      const { stats, ms } = await pass('admin');
      setImmediate(() => heap.afterPass(ms)); // after the reply is posted: the caller does not wait for it
      return stats;
    };
    const run = m.method === 'pass' ? adminPass : work.calls?.[m.method];
    const started = stopping
      ? Promise.reject(new Error(`the ${data.role} thread is stopping`))
      : run
        ? run()
        : Promise.reject(new Error(`the ${data.role} thread has no call ${m.method}`));
    const call = started.then(
      (value) => post({ type: 'reply', id: m.id, ok: true, value }),
      (e: unknown) => post({ type: 'reply', id: m.id, ok: false, error: toWire(e) }),
    );
    inflight.add(call);
    void call.finally(() => inflight.delete(call));
  });
  periodic?.start();
  post({ type: 'ready', threadId });
}
