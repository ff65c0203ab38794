export { EmbeddedHotTier, type EmbeddedHotTierOptions } from './embedded/hot-tier.js';
export { FilesystemObjectStore } from './embedded/object-store.js';
export { RedisHotTier, shardPrefix } from './redis/hot-tier.js';
export { S3ObjectStore, type S3ObjectStoreOptions } from './s3/object-store.js';
