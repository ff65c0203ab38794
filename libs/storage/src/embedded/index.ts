export { EmbeddedHotTier, type EmbeddedHotTierOptions } from './hot-tier.js';
export { FilesystemObjectStore } from './object-store.js';
export { MemoryCardinalityStore } from './cardinality.js';
