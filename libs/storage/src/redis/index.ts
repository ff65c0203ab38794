export { RedisHotTier, shardPrefix } from './hot-tier.js';
export { RedisCardinalityStore, cardinalityPrefix } from './cardinality.js';
