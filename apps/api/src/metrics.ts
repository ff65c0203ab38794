import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { WINDOW_MS, allShards, type Clock, type HotTier } from '@s4/core';
import type { CompactStats, FlushStats, QueryCounters, RollupStats, SeriesIndexStats } from '@s4/engine';

/** The Prometheus metrics of one process (GET /metrics). */
export class Metrics {
  readonly registry = new Registry();
  readonly ingestSamples = new Counter({ name: 's4_ingest_samples_total', help: 'Samples acknowledged', registers: [this.registry] });
  readonly ingestRequests = new Counter({ name: 's4_ingest_requests_total', help: 'Write requests by outcome', labelNames: ['outcome'], registers: [this.registry] });
  readonly ingestSeconds = new Histogram({ name: 's4_ingest_seconds', help: 'Write request latency', buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [this.registry] });
  readonly querySeconds = new Histogram({ name: 's4_query_seconds', help: 'Query latency', labelNames: ['format'], buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30], registers: [this.registry] });
  readonly queryPoints = new Counter({ name: 's4_query_points_total', help: 'Points returned by queries', registers: [this.registry] });
  readonly queryRequests = new Counter({ name: 's4_query_requests_total', help: 'Query requests by outcome', labelNames: ['outcome'], registers: [this.registry] });
  readonly flushObjects = new Counter({ name: 's4_flush_objects_total', help: 'Segment parts written', registers: [this.registry] });
  readonly flushSamples = new Counter({ name: 's4_flush_samples_total', help: 'Samples flushed to segments', registers: [this.registry] });
  readonly flushBytes = new Counter({ name: 's4_flush_bytes_total', help: 'Segment bytes written', registers: [this.registry] });
  readonly flushErrors = new Counter({ name: 's4_flush_errors_total', help: 'Failed flush passes', registers: [this.registry] });
  readonly flushSeconds = new Histogram({ name: 's4_flush_seconds', help: 'Flush pass duration', buckets: [0.01, 0.1, 1, 10, 60, 300], registers: [this.registry] });
  readonly rollupObjects = new Counter({ name: 's4_rollup_objects_total', help: 'Rollup objects written', registers: [this.registry] });
  readonly rollupErrors = new Counter({ name: 's4_rollup_errors_total', help: 'Failed aggregation passes', registers: [this.registry] });
  readonly compactWindows = new Counter({ name: 's4_compact_windows_total', help: 'Shard-windows folded into one part', registers: [this.registry] });
  readonly compactDays = new Counter({ name: 's4_compact_days_total', help: 'Closed shard-days folded into one day object', registers: [this.registry] });
  readonly compactPartsIn = new Counter({ name: 's4_compact_parts_in_total', help: 'Parts replaced by folds', registers: [this.registry] });
  readonly compactBytesIn = new Counter({ name: 's4_compact_bytes_in_total', help: 'Bytes of the parts folds replaced', registers: [this.registry] });
  readonly compactBytesOut = new Counter({ name: 's4_compact_bytes_out_total', help: 'Bytes of the folded parts written', registers: [this.registry] });
  readonly compactDeleted = new Counter({ name: 's4_compact_deleted_total', help: 'Replaced parts deleted after their grace period', registers: [this.registry] });
  readonly seriesIndexWrites = new Counter({ name: 's4_series_index_writes_total', help: 'Series indexes (one per shard-day) written by the compact role', registers: [this.registry] });
  readonly seriesIndexFooters = new Counter({ name: 's4_series_index_footers_total', help: 'Footers read to index parts the previous index did not cover', registers: [this.registry] });
  readonly retentionExpired = new Counter({ name: 's4_retention_expired_total', help: 'Objects retention took out of the catalogs (deleted after the grace), by kind (segment, rollup, catalog)', labelNames: ['kind'], registers: [this.registry] });
  readonly compactErrors = new Counter({ name: 's4_compact_errors_total', help: 'Failed compaction passes', registers: [this.registry] });
  readonly workerPasses = new Counter({ name: 's4_worker_passes_total', help: 'Passes run by the role worker threads, by role and trigger (periodic or admin)', labelNames: ['role', 'trigger'], registers: [this.registry] });
  /** How long passes take, every role alike: a slow rollup or compaction pass, or an admin call queued behind a periodic one, shows here. */
  readonly workerPassSeconds = new Histogram({
    name: 's4_worker_pass_seconds',
    help: 'Duration of the role worker threads\' passes, by role and trigger (periodic or admin)',
    labelNames: ['role', 'trigger'],
    buckets: [0.01, 0.1, 1, 10, 60, 300],
    registers: [this.registry],
  });
  readonly workerThreads = new Gauge({ name: 's4_worker_thread_info', help: 'The role worker threads running now (1 per thread), with their thread ids', labelNames: ['role', 'thread_id'], registers: [this.registry] });
  readonly seriesRefused = new Counter({ name: 's4_limit_refused_total', help: 'Write requests refused by a namespace limit (maxActiveSeries, maxNewSeriesPerMinute, maxSamplesPerSecond), by namespace and limit', labelNames: ['namespace', 'limit'], registers: [this.registry] });
  readonly policyReloads = new Counter({ name: 's4_namespace_reloads_total', help: 'Reloads of the namespace policy file, by outcome (accepted, refused)', labelNames: ['outcome'], registers: [this.registry] });
  readonly workerCrashes = new Counter({ name: 's4_worker_thread_crashes_total', help: 'Role worker threads that ended unexpectedly (each is restarted)', labelNames: ['role'], registers: [this.registry] });

  constructor(hot: HotTier, ns: string, shards: number, clock: Clock) {
    const registry = this.registry;
    new Gauge({
      name: 's4_flush_lag_seconds',
      help: 'Seconds since the oldest window still in the hot tier closed (0 when none is closed)',
      registers: [registry],
      async collect() {
        let oldest = Infinity;
        try {
          for (const shard of allShards(shards)) oldest = Math.min(oldest, (await hot.openWindows({ ns, shard }))[0] ?? Infinity);
        } catch {
          // The hot tier is down: keep the last value; the other metrics must still be served, above all now.
          return;
        }
        this.set(Number.isFinite(oldest) ? Math.max(0, (clock.now() - (oldest + WINDOW_MS)) / 1000) : 0);
      },
    });
    // How long a request that arrives waits before the HTTP thread looks at it: bulk slices (writes,
    // the embedded hot tier's commits), GC pauses, and time the OS ran other threads. Measured by
    // libuv timers every 10 ms; the quantiles are of the delays since the previous scrape.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    new Gauge({
      name: 's4_event_loop_delay_seconds',
      help: 'Event-loop delay of the HTTP thread since the previous scrape, by quantile (1 = the longest)',
      labelNames: ['quantile'],
      registers: [registry],
      collect() {
        if (loop.count === 0) return;
        for (const q of [0.5, 0.9, 0.99]) this.set({ quantile: String(q) }, loop.percentile(q * 100) / 1e9);
        this.set({ quantile: '1' }, loop.max / 1e9);
        loop.reset();
      },
    });
    new Gauge({
      name: 's4_hot_tier_bytes',
      help: 'Bytes held by the hot tier (embedded: log bytes; Redis: used_memory)',
      registers: [registry],
      async collect() {
        // As above: an unreachable hot tier keeps the last value rather than failing /metrics.
        const stats = await hot.stats().catch(() => null);
        if (stats) this.set(stats.bytes);
      },
    });
  }

  watchQuery(counters: QueryCounters): void {
    new Gauge({ name: 's4_object_reads_total', help: 'Object-store reads by queries', registers: [this.registry], collect() { this.set(counters.objectReads); } });
    new Gauge({ name: 's4_object_read_bytes_total', help: 'Bytes read from the object store by queries', registers: [this.registry], collect() { this.set(counters.objectBytes); } });
  }

  recordFlush(stats: FlushStats, ms: number): void {
    this.flushObjects.inc(stats.objects);
    this.flushSamples.inc(stats.samples);
    this.flushBytes.inc(stats.bytes);
    this.flushSeconds.observe(ms / 1000);
  }

  recordCompaction(stats: CompactStats & { index?: SeriesIndexStats }): void {
    if (stats.index) {
      this.seriesIndexWrites.inc(stats.index.indexes);
      this.seriesIndexFooters.inc(stats.index.footers);
    }
    this.compactWindows.inc(stats.windows);
    this.compactDays.inc(stats.days);
    this.compactPartsIn.inc(stats.partsIn);
    this.compactBytesIn.inc(stats.bytesIn);
    this.compactBytesOut.inc(stats.bytesOut);
    this.compactDeleted.inc(stats.deleted);
    const r = (stats as CompactStats & { retention?: { segments: number; rollups: number; catalogs: number } }).retention;
    if (r) {
      this.retentionExpired.inc({ kind: 'segment' }, r.segments);
      this.retentionExpired.inc({ kind: 'rollup' }, r.rollups);
      this.retentionExpired.inc({ kind: 'catalog' }, r.catalogs);
    }
  }

  recordRollup(stats: RollupStats): void {
    this.rollupObjects.inc(stats.objects);
  }

  /** A failed periodic pass (logged by the thread's supervisor); the worker tries again on its next pass. */
  recordRollupError(): void {
    this.rollupErrors.inc();
  }

  recordFlushError(): void {
    this.flushErrors.inc();
  }

  recordPass(role: string, trigger: string, ms: number): void {
    this.workerPasses.inc({ role, trigger });
    this.workerPassSeconds.observe({ role, trigger }, ms / 1000);
  }

  threadStarted(role: string, threadId: number): void {
    this.workerThreads.set({ role, thread_id: String(threadId) }, 1);
  }

  threadEnded(role: string, threadId: number, unexpectedly: boolean): void {
    this.workerThreads.remove({ role, thread_id: String(threadId) });
    if (unexpectedly) this.workerCrashes.inc({ role });
  }
}
