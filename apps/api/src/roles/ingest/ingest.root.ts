import { Logger } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import type { HotTier } from '@s4/core';
import type { Config } from '@s4/config';
import { Writer } from '@s4/engine';
import { KafkaIngestConsumer, type KafkaIngestLog } from '@s4/storage/kafka';
import type { IngestReadiness, IngestReadinessSource } from '../../http/health.controller.js';
import type { Metrics } from '../../metrics.js';
import type { IngestLagMonitor } from './lag.js';

/** First retry of a failed start (Kafka down when the process starts); doubles up to a minute. */
const RETRY_MS = 1_000;

/**
 * Composition root of the ingest role (S4_ROLE=ingest or all, with S4_INGEST=kafka): a member of
 * the Kafka consumer group that writes each batch of its partitions (= shards) to the hot tier
 * through the engine's Writer, then commits the batch's offsets.
 *
 * It runs on the main thread: its work is waiting on Kafka and on the hot tier, and the bytes it
 * appends were encoded by the API that produced them, so it spends little CPU; the embedded hot
 * tier is owned by this thread too, so appends need no RPC.
 */
export class IngestRoot implements IngestReadinessSource {
  private readonly log = new Logger('ingest');
  private consumer: KafkaIngestConsumer | null = null;
  private stopped = false;
  private starting: Promise<void> | null = null;
  private readonly batches: Counter;
  private readonly appendedBytes: Counter;
  private readonly errors: Counter;
  private readonly writer: Writer;

  constructor(
    private readonly config: Config,
    hot: HotTier,
    private readonly ingestLog: KafkaIngestLog,
    private readonly lag: IngestLagMonitor,
    metrics: Metrics,
  ) {
    this.writer = new Writer(hot, { ns: config.namespace, shards: config.shards, maxRecordBytes: config.limits.maxRecordBytes });
    const registers = [metrics.registry];
    this.batches = new Counter({ name: 's4_ingest_consumed_batches_total', help: 'Batches the ingest role wrote to the hot tier and committed', registers });
    this.appendedBytes = new Counter({ name: 's4_ingest_consumed_bytes_total', help: 'Hot-log bytes the ingest role wrote to the hot tier', registers });
    this.errors = new Counter({ name: 's4_ingest_consume_errors_total', help: 'Ingest consumer crashes (each is retried; the batch is consumed again)', registers });
    const assignedShards = () => [...(this.consumer?.assigned()?.values() ?? [])].reduce((n, s) => n + s.length, 0);
    new Gauge({
      name: 's4_ingest_assigned_shards',
      help: 'Shards (Kafka partitions) assigned to this ingest worker',
      registers,
      collect() {
        this.set(assignedShards());
      },
    });
  }

  /** Join the group in the background: a Kafka outage at start delays consuming, not the process. */
  start(): void {
    this.starting = this.run(RETRY_MS);
  }

  private async run(delayMs: number): Promise<void> {
    if (this.stopped) return;
    const { config } = this;
    const kafka = config.kafka!;
    const consumer = new KafkaIngestConsumer(this.ingestLog.kafka, {
      topicPrefix: kafka.topicPrefix,
      namespaces: [config.namespace],
      batchBytes: config.ingest.batchBytes,
      sessionTimeoutMs: config.ingest.sessionTimeoutMs,
      timeoutMs: kafka.timeoutMs,
      concurrency: Math.min(config.shards, 4),
      onCrash: (e) => {
        this.errors.inc();
        this.log.warn(`ingest consumer stopped, kafkajs restarts it: ${e.message}`);
      },
    });
    this.consumer = consumer;
    try {
      await this.ingestLog.prepare(config.namespace);
      await consumer.start(async (batch) => {
        await this.writer.appendEncoded(batch.appends);
        this.batches.inc();
        this.appendedBytes.inc(batch.appends.reduce((n, a) => n + a.data.length, 0));
      });
    } catch (e) {
      await consumer.close();
      if (this.stopped) return;
      this.log.warn(`ingest consumer could not start, retrying in ${delayMs} ms: ${e instanceof Error ? e.message : String(e)}`);
      await new Promise((r) => setTimeout(r, delayMs));
      return this.run(Math.min(delayMs * 2, 60_000));
    }
  }

  /**
   * Ready when the consumer is in its group and each shard assigned to it lags at most
   * S4_INGEST_READY_LAG messages, by a lag read recently enough to trust.
   */
  readiness(): IngestReadiness {
    const assigned = this.consumer?.assigned();
    if (!assigned) return { ready: false, reason: 'not in the consumer group yet' };
    const shards = [...(assigned.get(this.config.namespace) ?? [])];
    const snap = this.lag.fresh();
    if (!snap) return { ready: false, reason: 'lag unknown (Kafka unreachable?)', shards };
    const behind = shards.filter((s) => (snap.shards.get(s) ?? 0) > this.lag.readyLag);
    if (behind.length > 0) return { ready: false, reason: `shards ${behind.join(',')} lag more than ${this.lag.readyLag} messages`, shards };
    return { ready: true, shards };
  }

  /** Leave the group (the batch being written finishes first); its partitions move to the other workers. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.consumer?.close();
    await this.starting?.catch(() => undefined);
  }
}
