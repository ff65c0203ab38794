export { S3ObjectStore, type S3ObjectStoreOptions } from './object-store.js';
