import { Logger } from '@nestjs/common';
import { systemClock, type Clock, type HotTier, type ObjectStore } from '@s4/core';
import type { Config, Role } from '@s4/config';
import type { CompactStats, FlushStats, RollupStats } from '@s4/engine';
import { MemoryCardinalityStore } from '@s4/storage/embedded';
import type { RedisHotTier } from '@s4/storage/redis';
import { PeriodicWorker } from '@s4/engine';
import { Metrics } from '../metrics.js';
import { PolicyWatcher } from '../namespaces/policy-watcher.js';
import { REQUESTS, checkNamespaceManifests, openHotTier, openIngestLog, openObjectStore, prepareObjectStore } from '../stores.js';
import { createApiRoot, type ApiRoot } from './api/api.root.js';
import type { IngestRoot } from './ingest/ingest.root.js';
import { IngestLagMonitor } from './ingest/lag.js';
import { WorkerPasses } from './threads/passes.js';
import { RoleThread, type RoleThreadObserver } from './threads/role-thread.js';
import type { WorkerRole } from './threads/wire.js';

/** Which roles run in worker threads of a process started with S4_ROLE=role. */
const THREADED: Record<Role, readonly WorkerRole[]> = {
  all: ['segment', 'aggregate', 'compact'],
  api: [],
  segment: ['segment'],
  aggregate: ['aggregate'],
  compact: ['compact'],
  // The ingest role runs on the main thread (ingest/ingest.root.ts says why).
  ingest: [],
};

/**
 * Everything one S4 process runs, by S4_ROLE. On the main (HTTP) thread: the hot tier and the
 * object store (for /readyz and /metrics; the embedded hot tier's one owner), the metrics, and
 * with api or all the API role. In worker threads: the segment and aggregate roles.
 */
export interface ProcessRoles {
  readonly config: Config;
  readonly clock: Clock;
  readonly hot: HotTier;
  readonly objects: ObjectStore;
  readonly metrics: Metrics;
  /** The API role (null in a segment- or aggregate-only process, which serves only health and metrics). */
  readonly api: ApiRoot | null;
  /** The ingest role (S4_ROLE=ingest or all, with S4_INGEST=kafka). */
  readonly ingest: IngestRoot | null;
  /** The ingest group's lag per shard, read from Kafka (null with direct ingest). */
  readonly lag: IngestLagMonitor | null;
  /** The namespace policies in force (S4_NAMESPACES_FILE, reloaded when it changes). */
  readonly policies: PolicyWatcher;
  /** The role threads this process runs, by role. */
  readonly threads: ReadonlyMap<WorkerRole, RoleThread>;
  /** Admin passes: in those threads, or in one-off threads in an api-only process. */
  readonly passes: WorkerPasses;
  /** Stop the role threads (each finishes its running pass), then close the stores. */
  close(): Promise<void>;
}

export async function startRoles(config: Config, clock: Clock = systemClock): Promise<ProcessRoles> {
  const hot = await openHotTier(config, clock);
  const objects = await openObjectStore(config);
  const threads = new Map<WorkerRole, RoleThread>();
  const kafkaLog = new Logger('kafka');
  const ingestLog = await openIngestLog(config, (level, message) => (level === 'error' ? kafkaLog.error(message) : kafkaLog.warn(message)));
  let passes: WorkerPasses | null = null;
  let ingest: IngestRoot | null = null;
  let lag: IngestLagMonitor | null = null;
  let policies: PolicyWatcher | null = null;
  let counting: PeriodicWorker | null = null;
  let flushCounts: (() => Promise<void>) | null = null;
  const close = async () => {
    // The consumer first: the batch it is writing lands in the hot tier before that closes.
    await ingest?.close();
    await lag?.stop();
    await ingestLog?.close();
    await counting?.stop();
    await flushCounts?.().catch(() => undefined);
    await policies?.close();
    await passes?.close();
    await Promise.all([...threads.values()].map((t) => t.stop()));
    await hot.close();
    await objects.close();
  };
  try {
    await prepareObjectStore(objects, config);
    const metrics = new Metrics(hot, config.namespace, config.shards, clock);
    if (ingestLog) {
      lag = new IngestLagMonitor(ingestLog, config.namespace, { intervalMs: config.ingest.lagIntervalMs, readyLag: config.ingest.readyLag }, clock, metrics);
      lag.start();
    }
    const log = new Logger('namespaces');
    policies = await PolicyWatcher.start(config, log, (set) => checkNamespaceManifests(objects, config, set));
    const watcher = policies;
    watcher.onChange(() => metrics.policyReloads.inc({ outcome: 'accepted' }));
    watcher.onRefused(() => metrics.policyReloads.inc({ outcome: 'refused' }));
    const serving = config.role === 'all' || config.role === 'api';
    // Series counters live beside the hot tier: shared by every API process on one Redis.
    const cardinality = config.hot.kind === 'redis' ? (hot as RedisHotTier).cardinality() : new MemoryCardinalityStore();
    const api = serving ? createApiRoot(config, hot, objects, metrics, clock, watcher, cardinality, ingestLog) : null;
    // Once a second: samples admitted (API) and object-store requests (every thread) join the shared counters.
    flushCounts = async () => {
      const now = clock.now();
      await api?.admission.flushCounts(now);
      await Promise.all(REQUESTS.take().map(([ns, r]) => cardinality.addRequests(ns, r.put, r.get, now)));
    };
    counting = new PeriodicWorker(1_000, flushCounts, (e) => log.warn(`usage counts not saved (retried in 1 s): ${(e as Error).message}`));
    counting.start();
    if (ingestLog && lag && (config.role === 'all' || config.role === 'ingest')) {
      const { IngestRoot } = await import('./ingest/ingest.root.js'); // loads kafkajs: only when Kafka is configured
      ingest = new IngestRoot(config, hot, ingestLog, lag, metrics);
      ingest.start();
    }
    const observer = { ...metricsObserver(metrics), usage: (requests: [string, { put: number; get: number }][]) => REQUESTS.addAll(requests) };
    const thread = (role: WorkerRole, periodic: boolean) =>
      new RoleThread({ role, config, hot: config.hot.kind === 'embedded' ? hot : null, periodic, observer });
    for (const role of THREADED[config.role]) threads.set(role, thread(role, true));
    await Promise.all([...threads.values()].map((t) => t.start()));
    passes = new WorkerPasses(threads, (role) => thread(role, false));
    return { config, clock, hot, objects, metrics, api, ingest, lag, policies: watcher, threads, passes, close };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}

/** Role threads report to the main thread's metrics, so GET /metrics shows their passes. */
function metricsObserver(metrics: Metrics): RoleThreadObserver {
  return {
    started: (role, threadId) => metrics.threadStarted(role, threadId),
    ended: (role, threadId, unexpectedly) => metrics.threadEnded(role, threadId, unexpectedly),
    pass(role, trigger, stats, ms) {
      metrics.recordPass(role, trigger, ms);
      if (role === 'segment') metrics.recordFlush(stats as FlushStats, ms);
      else if (role === 'aggregate') metrics.recordRollup(stats as RollupStats);
      else metrics.recordCompaction(stats as CompactStats);
    },
    passFailed(role) {
      if (role === 'segment') metrics.recordFlushError();
      else if (role === 'aggregate') metrics.recordRollupError();
      else metrics.compactErrors.inc();
    },
  };
}
