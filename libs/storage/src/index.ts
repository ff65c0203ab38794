// Each adapter also has an entry of its own (@s4/storage/embedded, /redis, /s3, /kafka): a
// process loads only the clients its config names (the AWS SDK, kafkajs and ioredis cost ~40 MB
// of memory in every thread that imports them).
export * from './embedded/index.js';
export * from './redis/index.js';
export * from './s3/index.js';
export * from './kafka/index.js';
