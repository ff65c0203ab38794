export type { NodeColumn } from './nodes.js';
export { escapeKey, formatProjectionPath, parseColumnPath, parseProjectionPath, selectPaths, type Selection } from './path.js';
export { MISSING, projectColumns, projectValue } from './project.js';
export { Kind, MAX_NODES } from './shred.js';
export { JsonBytes } from './json-bytes.js';
