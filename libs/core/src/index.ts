export * from './errors.js';
export * from './keys.js';
export * from './model.js';
export * from './ports.js';
export * from './roles.js';
export * from './shard.js';
export * from './time.js';
export * from './matchers.js';
