export { KafkaIngestLog, MAX_MESSAGE_BYTES, topicSettings, type KafkaIngestLogOptions } from './ingest-log.js';
export { KafkaIngestConsumer, type KafkaIngestConsumerOptions } from './consumer.js';
export { groupOf, topicOf, type KafkaOptions } from './client.js';
