export { EmbeddedHotTier, type EmbeddedHotTierOptions } from './embedded/hot-tier.js';
export { FilesystemObjectStore } from './embedded/object-store.js';
export { RedisHotTier, shardPrefix } from './redis/hot-tier.js';
export { S3ObjectStore, type S3ObjectStoreOptions } from './s3/object-store.js';
export { KafkaIngestLog, MAX_MESSAGE_BYTES, topicSettings, type KafkaIngestLogOptions } from './kafka/ingest-log.js';
export { KafkaIngestConsumer, type KafkaIngestConsumerOptions } from './kafka/consumer.js';
export { groupOf, topicOf, type KafkaOptions } from './kafka/client.js';
export { MemoryCardinalityStore } from './embedded/cardinality.js';
export { RedisCardinalityStore, cardinalityPrefix } from './redis/cardinality.js';
