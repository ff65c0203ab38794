import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { HotAppend, IngestBatch, IngestConsumer } from '@s4/core';
import { INGEST_MESSAGE_HEADER, decodeIngestMessage } from '@s4/format';
import { groupOf, timed, topicOf } from './client.js';

export interface KafkaIngestConsumerOptions {
  readonly topicPrefix: string;
  readonly namespaces: readonly string[];
  /** Bytes fetched per partition per batch (one hot-tier append per batch). */
  readonly batchBytes: number;
  /** A worker that stops heartbeating this long is out of the group; its partitions move. */
  readonly sessionTimeoutMs: number;
  readonly timeoutMs: number;
  /** How many shards' batches are written at once. */
  readonly concurrency: number;
  readonly onCrash?: (e: Error) => void;
}

/**
 * The ingest role's consumer: one member of the group `<prefix>.ingest`, which splits every
 * namespace topic's partitions (= shards) among the running ingest workers. A batch's offsets are
 * committed only after its appends are durable in the hot tier; a new owner of the partition (a
 * rebalance after a crash) starts at the last commit, so a batch may be written twice, never
 * skipped. Writes are idempotent (same series and timestamp: the last write wins), and a partition
 * is replayed in its order, so a repeat changes nothing.
 */
export class KafkaIngestConsumer implements IngestConsumer {
  private consumer: Consumer | null = null;
  private assignment: Map<string, number[]> | null = null;
  private readonly nsOfTopic: Map<string, string>;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: KafkaIngestConsumerOptions,
  ) {
    this.nsOfTopic = new Map(options.namespaces.map((ns) => [topicOf(options.topicPrefix, ns), ns]));
  }

  async start(handle: (batch: IngestBatch) => Promise<void>): Promise<void> {
    const { topicPrefix, batchBytes, sessionTimeoutMs, timeoutMs, concurrency } = this.options;
    const consumer = this.kafka.consumer({
      groupId: groupOf(topicPrefix),
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: Math.max(100, Math.floor(sessionTimeoutMs / 5)),
      rebalanceTimeout: Math.max(sessionTimeoutMs, 10_000),
      maxBytesPerPartition: batchBytes,
      maxBytes: Math.max(batchBytes * concurrency, 10 * 1024 * 1024),
      // An idle partition is polled this often; data that arrives is returned at once.
      maxWaitTimeInMs: 250,
      allowAutoTopicCreation: false,
      retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const a = e.payload.memberAssignment;
      this.assignment = new Map(Object.entries(a).flatMap(([topic, partitions]) => {
        const ns = this.nsOfTopic.get(topic);
        return ns === undefined ? [] : [[ns, [...partitions].sort((x, y) => x - y)] as const];
      }));
    });
    consumer.on(consumer.events.CRASH, (e) => {
      // kafkajs restarts the consumer itself after a retriable crash; the log says why it had to.
      this.options.onCrash?.(e.payload.error);
    });
    await timed('connecting the ingest consumer', timeoutMs, consumer.connect());
    await timed('subscribing the ingest consumer', timeoutMs, consumer.subscribe({ topics: [...this.nsOfTopic.keys()], fromBeginning: true }));
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: concurrency,
      eachBatch: (payload) => this.batch(consumer, payload, handle),
    });
  }

  private async batch(consumer: Consumer, { batch, resolveOffset, heartbeat, isStale, isRunning }: EachBatchPayload, handle: (b: IngestBatch) => Promise<void>): Promise<void> {
    if (batch.isEmpty() || !isRunning() || isStale()) return;
    const ns = this.nsOfTopic.get(batch.topic);
    if (ns === undefined) return;
    const appends: HotAppend[] = [];
    for (const m of batch.messages) {
      if (!m.value) continue;
      const version = m.headers?.[INGEST_MESSAGE_HEADER];
      // A message that does not decode stops this partition (the error is retried and logged, the
      // lag grows, readiness fails) rather than being skipped: skipping would lose acknowledged data.
      for (const a of decodeIngestMessage(m.value, version === undefined ? undefined : String(version))) appends.push(a);
    }
    // Partition = shard; the shard written is the partition's, whatever a message claims.
    const shard = batch.partition;
    if (appends.some((a) => a.ref.ns !== ns || a.ref.shard !== shard))
      throw new Error(`a message in ${batch.topic} partition ${shard} holds appends of another namespace or shard`);
    await handle({ ref: { ns, shard }, appends });
    const last = batch.lastOffset();
    resolveOffset(last);
    // A partition revoked meanwhile: its new owner replays this batch (harmless) and commits.
    if (isStale()) return;
    await consumer.commitOffsets([{ topic: batch.topic, partition: shard, offset: (BigInt(last) + 1n).toString() }]);
    await heartbeat();
  }

  assigned(): ReadonlyMap<string, readonly number[]> | null {
    return this.assignment;
  }

  async close(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
  }
}
