/** Injection tokens of the API role's services (see api.root.ts). */
export const WRITER = Symbol('S4_WRITER');
export const QUERY_ENGINE = Symbol('S4_QUERY_ENGINE');
/** The admin endpoints' route to the segment and aggregate worker threads. */
export const WORKER_PASSES = Symbol('S4_WORKER_PASSES');
/** Per-shard health (hot tier, catalogs) for GET /v1/admin/shards. */
export const HEALTH_READER = Symbol('S4_HEALTH_READER');
/** Namespace limits of writes (libs/engine namespaces/admission.ts). */
export const ADMISSION = Symbol('S4_ADMISSION');
/** The namespace policies in force (namespaces/policy-watcher.ts). */
export const POLICIES = Symbol('S4_POLICIES');
/** The process's object store (cost report). */
export const OBJECTS = Symbol('S4_API_OBJECTS');
/** Deleted series (libs/engine deletes). */
export const TOMBSTONES = Symbol('S4_TOMBSTONES');
/** Series and sample counters per namespace and metric. */
export const CARDINALITY = Symbol('S4_CARDINALITY');
