import { Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import type { Clock, IngestLog } from '@s4/core';
import type { Metrics } from '../../metrics.js';

/** What is known of one namespace's lag: per shard, messages not yet committed by the ingest role. */
export interface LagSnapshot {
  readonly shards: ReadonlyMap<number, number>;
  /** When it was read (clock ms). */
  readonly at: number;
}

/**
 * Reads the ingest group's lag (end offset minus committed offset, per partition = shard) every
 * `intervalMs`, for /metrics, GET /v1/admin/shards, the ingest worker's /readyz and the warning
 * on queries. Runs in every process of a Kafka-ingest deployment; a failed read keeps the last
 * snapshot (which then ages: readiness treats an old one as unknown).
 */
export class IngestLagMonitor {
  private readonly log = new Logger('ingest lag');
  private last: LagSnapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<unknown> | null = null;
  private failing = false;

  constructor(
    private readonly ingestLog: IngestLog,
    readonly ns: string,
    private readonly options: { readonly intervalMs: number; readonly readyLag: number },
    private readonly clock: Clock,
    metrics: Metrics,
  ) {
    const last = () => this.last;
    new Gauge({
      name: 's4_ingest_lag_messages',
      help: 'Per shard (= Kafka partition): messages in the ingest log not yet committed by an ingest worker',
      labelNames: ['shard'],
      registers: [metrics.registry],
      collect() {
        const snap = last();
        if (!snap) return;
        for (const [shard, lag] of snap.shards) this.set({ shard: String(shard) }, lag);
      },
    });
    new Gauge({
      name: 's4_ingest_lag_age_seconds',
      help: 'Seconds since the ingest lag was last read from Kafka',
      registers: [metrics.registry],
      collect() {
        const snap = last();
        if (snap) this.set((clock.now() - snap.at) / 1000);
      },
    });
  }

  start(): void {
    const tick = () => {
      this.reading = this.read().finally(() => {
        this.reading = null;
        if (this.timer) this.timer = setTimeout(tick, this.options.intervalMs).unref();
      });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  /** Read now (tests, and the admin endpoint when the snapshot is old). */
  async read(): Promise<LagSnapshot | null> {
    try {
      this.last = { shards: await this.ingestLog.lag(this.ns), at: this.clock.now() };
      if (this.failing) this.log.log('reading the ingest lag works again');
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.log.warn(`cannot read the ingest lag, keeping the last one: ${e instanceof Error ? e.message : String(e)}`);
      this.failing = true;
    }
    return this.last;
  }

  snapshot(): LagSnapshot | null {
    return this.last;
  }

  /** The snapshot if it is recent enough to decide on (three read intervals), else null. */
  fresh(): LagSnapshot | null {
    const snap = this.last;
    return snap && this.clock.now() - snap.at <= 3 * this.options.intervalMs + 1_000 ? snap : null;
  }

  /** Shards whose lag is over the threshold (S4_INGEST_READY_LAG): their recent data may be missing from answers. */
  lagging(): number[] {
    const snap = this.last;
    if (!snap) return [];
    return [...snap.shards].filter(([, lag]) => lag > this.options.readyLag).map(([shard]) => shard).sort((a, b) => a - b);
  }

  get readyLag(): number {
    return this.options.readyLag;
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.reading;
  }
}
