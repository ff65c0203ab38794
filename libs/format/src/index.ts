export * from './msgpack.js';
