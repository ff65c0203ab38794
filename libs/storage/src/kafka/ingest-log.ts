import type { Admin, ITopicConfig, Kafka, Producer, TopicMessages } from 'kafkajs';
import { LimitError, UnavailableError, type HotAppend, type IngestLog } from '@s4/core';
import { INGEST_MESSAGE_HEADER, INGEST_MESSAGE_VERSION, encodeIngestAppend } from '@s4/format';
import { createKafka, groupOf, timed, topicOf, type KafkaOptions } from './client.js';

export interface KafkaIngestLogOptions extends KafkaOptions {
  /** Partitions of every topic: one per shard, partition = shard. */
  readonly shards: number;
  /** Replication factor of the topics S4 creates; 0 leaves it and min.insync.replicas to the cluster (MSK Serverless). */
  readonly replication: number;
  readonly retentionMs: number;
}

/** Appends of one shard are packed into messages of about this many bytes. */
export const MESSAGE_BYTES = 1024 * 1024;
/** One produce request carries about this many bytes per partition (a record batch under MAX_MESSAGE_BYTES). */
export const ROUND_BYTES = 4 * 1024 * 1024;
/**
 * The largest message S4 produces, and the topics' max.message.bytes: 8 MiB is the most Amazon
 * MSK Serverless allows. One series' samples of one hour in one request must fit in it.
 */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * The ingest log on Kafka: topic `<prefix>.<namespace>`, partition = shard. Produces with an
 * idempotent producer and acks=all; reads the ingest group's lag with the admin client.
 */
export class KafkaIngestLog implements IngestLog {
  readonly kafka: Kafka;
  private producer: Producer | null = null;
  private producerReady: Promise<void> | null = null;
  private admin: Admin | null = null;
  private adminReady: Promise<void> | null = null;
  private readonly topics = new Map<string, Promise<void>>();
  private closed = false;
  private readonly pending: { messages: Map<ShardKey, Buffer[]>; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private sending: Promise<void> | null = null;
  /** A produce timed out and kafkajs still retries it: nothing else may be produced before it settles. */
  private settling = false;

  constructor(private readonly options: KafkaIngestLogOptions) {
    this.kafka = createKafka(options);
  }

  topic(ns: string): string {
    return topicOf(this.options.topicPrefix, ns);
  }

  /**
   * The namespace's topic exists with one partition per shard, created with the settings Amazon
   * MSK documents for durable topics when missing (auto-creation is off on MSK). A topic with
   * another partition count is refused: shards would land in the wrong partitions.
   */
  async prepare(ns: string): Promise<void> {
    let ready = this.topics.get(ns);
    if (!ready) {
      ready = this.createTopic(ns);
      this.topics.set(ns, ready);
      ready.catch(() => this.topics.delete(ns));
    }
    await ready;
  }

  private async createTopic(ns: string): Promise<void> {
    const { shards, replication, retentionMs, timeoutMs } = this.options;
    const admin = await this.connectedAdmin();
    const topic = this.topic(ns);
    const config: ITopicConfig = {
      topic,
      numPartitions: shards,
      replicationFactor: replication === 0 ? -1 : replication,
      configEntries: topicSettings(replication, retentionMs),
    };
    await timed(`creating topic ${topic}`, timeoutMs, admin.createTopics({ topics: [config], waitForLeaders: true, timeout: timeoutMs }));
    const meta = await timed(`reading topic ${topic}`, timeoutMs, admin.fetchTopicMetadata({ topics: [topic] }));
    const partitions = meta.topics[0]?.partitions.length ?? 0;
    if (partitions !== shards)
      throw new Error(`Kafka topic ${topic} has ${partitions} partitions but S4_SHARDS=${shards}: partition = shard, so they must be equal (delete the topic when it holds nothing to keep, or use another S4_KAFKA_TOPIC_PREFIX)`);
  }

  async publish(appends: readonly HotAppend[]): Promise<void> {
    if (appends.length === 0) return;
    const messages = pack(appends);
    const namespaces = new Set(appends.map((a) => a.ref.ns));
    for (const ns of namespaces) await this.prepare(ns);
    await this.connectedProducer();
    if (this.settling) throw new UnavailableError('ingest log', 'producing to Kafka: a failed produce is still being retried', 5, 'timeout');
    await new Promise<void>((resolve, reject) => {
      this.pending.push({ messages, resolve, reject });
      if (!this.sending) this.sending = this.drain().finally(() => (this.sending = null));
    });
  }

  /**
   * Group commit: the requests that arrive while a produce is in flight go out together in the
   * next one (one record batch per partition), in arrival order. The producer keeps one request in
   * flight per broker, so that retries never reorder a shard's writes; grouping is what keeps
   * concurrent writers from queueing one produce round trip each.
   */
  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending.splice(0);
      let failed = false;
      try {
        for (const round of rounds(group.map((g) => g.messages))) {
          const topicMessages = new Map<string, TopicMessages>();
          for (const [key, values] of round) {
            const topic = this.topic(key.ns);
            let t = topicMessages.get(topic);
            if (!t) topicMessages.set(topic, (t = { topic, messages: [] }));
            for (const value of values) t.messages.push({ partition: key.shard, value, headers: { [INGEST_MESSAGE_HEADER]: INGEST_MESSAGE_VERSION } });
          }
          const { timeoutMs } = this.options;
          const send = this.producer!.sendBatch({ topicMessages: [...topicMessages.values()], acks: -1, timeout: timeoutMs });
          try {
            await timed('producing to Kafka', timeoutMs, send);
          } catch (e) {
            // Answer now, but produce nothing else until this call settles: kafkajs keeps retrying
            // it, and a later produce must never land before it (the retried, older value of a
            // sample would then overwrite a newer, acknowledged one).
            failed = true;
            for (const g of [...group, ...this.pending.splice(0)]) g.reject(e);
            this.settling = true;
            await send.catch(() => undefined).finally(() => (this.settling = false));
            break;
          }
        }
        if (!failed) for (const g of group) g.resolve();
      } catch (e) {
        for (const g of group) g.reject(e);
      }
    }
  }

  async lag(ns: string): Promise<Map<number, number>> {
    // The topic first: kafkajs's admin keeps every topic it was asked about in its metadata
    // refreshes, and one that does not exist would fail them all, topic creation included.
    await this.prepare(ns);
    const admin = await this.connectedAdmin();
    const topic = this.topic(ns);
    const { timeoutMs, topicPrefix } = this.options;
    const [ends, groups] = await timed(
      `reading the offsets of ${topic}`,
      timeoutMs,
      Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId: groupOf(topicPrefix), topics: [topic] })]),
    );
    const committed = new Map((groups[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    const lag = new Map<number, number>();
    for (const p of ends) {
      const c = committed.get(p.partition) ?? -1n;
      // No commit yet: the group will start at the earliest offset still in the log.
      const from = c < 0n ? BigInt(p.low) : c;
      lag.set(p.partition, Number(BigInt(p.high) - from));
    }
    return lag;
  }

  async close(): Promise<void> {
    this.closed = true;
    const clients: (Producer | Admin)[] = [this.producer, this.admin].filter((c) => c !== null);
    await Promise.all(clients.map((c) => c.disconnect().catch(() => undefined)));
  }

  private async connectedProducer(): Promise<Producer> {
    if (this.closed) throw new Error('the ingest log is closed');
    if (!this.producer) {
      // maxInFlightRequests 1: with retries, a later batch never lands before an earlier one.
      this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    }
    const producer = this.producer;
    if (!this.producerReady) {
      this.producerReady = timed('connecting to Kafka', this.options.timeoutMs, producer.connect());
      this.producerReady.catch(() => (this.producerReady = null));
    }
    await this.producerReady;
    return producer;
  }

  private async connectedAdmin(): Promise<Admin> {
    if (this.closed) throw new Error('the ingest log is closed');
    this.admin ??= this.kafka.admin();
    const admin = this.admin;
    if (!this.adminReady) {
      this.adminReady = timed('connecting to Kafka', this.options.timeoutMs, admin.connect());
      this.adminReady.catch(() => (this.adminReady = null));
    }
    await this.adminReady;
    return admin;
  }
}

/**
 * Topic settings from the Amazon MSK documentation: replication factor 3 with
 * min.insync.replicas 2 (one broker may be down while acks=all writes go on), no unclean leader
 * election (a stale replica never becomes leader and drops acknowledged messages). MSK Serverless
 * fixes replication itself and accepts only a few settings, so with replication 0 only those are set.
 */
export function topicSettings(replication: number, retentionMs: number): { name: string; value: string }[] {
  const entries = [
    { name: 'cleanup.policy', value: 'delete' },
    { name: 'retention.ms', value: String(retentionMs) },
    { name: 'max.message.bytes', value: String(MAX_MESSAGE_BYTES) },
  ];
  if (replication > 0)
    entries.push(
      { name: 'min.insync.replicas', value: String(Math.max(1, replication - 1)) },
      { name: 'unclean.leader.election.enable', value: 'false' },
    );
  return entries;
}

/**
 * The messages of several publishes as produce rounds: per shard, in order, about ROUND_BYTES of
 * messages per round; a shard's later messages go in later rounds, sent after the earlier ones.
 */
export function rounds(groups: readonly Map<ShardKey, Buffer[]>[]): Map<ShardKey, Buffer[]>[] {
  const byShard = new Map<string, { key: ShardKey; values: Buffer[] }>();
  for (const g of groups)
    for (const [key, values] of g) {
      const name = `${key.ns}\u0000${key.shard}`;
      let s = byShard.get(name);
      if (!s) byShard.set(name, (s = { key, values: [] }));
      s.values.push(...values);
    }
  const out: Map<ShardKey, Buffer[]>[] = [];
  for (const { key, values } of byShard.values()) {
    let round = 0;
    let bytes = 0;
    for (const v of values) {
      if (bytes > 0 && bytes + v.length > ROUND_BYTES) {
        round++;
        bytes = 0;
      }
      out[round] ??= new Map();
      const list = out[round]!.get(key) ?? [];
      if (list.length === 0) out[round]!.set(key, list);
      list.push(v);
      bytes += v.length;
    }
  }
  return out;
}

export interface ShardKey {
  readonly ns: string;
  readonly shard: number;
}

/** The appends as message values per shard, in order, each about MESSAGE_BYTES at most. */
export function pack(appends: readonly HotAppend[]): Map<ShardKey, Buffer[]> {
  const keys = new Map<string, ShardKey>();
  const parts = new Map<ShardKey, { records: Buffer[]; bytes: number }[]>();
  for (const a of appends) {
    const record = encodeIngestAppend(a);
    if (record.length > MAX_MESSAGE_BYTES)
      throw new LimitError(
        'kafka.max.message.bytes',
        MAX_MESSAGE_BYTES,
        `the samples of series ${a.key.metric} in the hour from ${new Date(a.window).toISOString()} encode to ${record.length} bytes, more than one Kafka message may hold; send them in several requests`,
        413,
      );
    const name = `${a.ref.ns}\u0000${a.ref.shard}`;
    let key = keys.get(name);
    if (!key) keys.set(name, (key = { ns: a.ref.ns, shard: a.ref.shard }));
    let list = parts.get(key);
    if (!list) parts.set(key, (list = [{ records: [], bytes: 0 }]));
    let last = list[list.length - 1]!;
    if (last.records.length > 0 && last.bytes + record.length > MESSAGE_BYTES) list.push((last = { records: [], bytes: 0 }));
    last.records.push(record);
    last.bytes += record.length;
  }
  return new Map([...parts].map(([k, list]) => [k, list.map((m) => Buffer.concat(m.records, m.bytes))]));
}
