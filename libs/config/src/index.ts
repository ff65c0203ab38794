export * from './config.js';
export * from './namespaces.js';
