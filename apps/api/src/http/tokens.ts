/**
 * Injection tokens of what every S4 process's HTTP server has (health, readiness, metrics), one per
 * service, so that each controller names exactly what it uses. The API role's own services have
 * theirs in roles/api/tokens.ts.
 */
export const CONFIG = Symbol('S4_CONFIG');
export const CLOCK = Symbol('S4_CLOCK');
export const METRICS = Symbol('S4_METRICS');
/** The process's hot tier (the embedded one's owner is the main thread). */
export const HOT_TIER = Symbol('S4_HOT_TIER');
export const OBJECT_STORE = Symbol('S4_OBJECT_STORE');
/** The ingest role of this process (null unless it consumes Kafka), for /readyz. */
export const INGEST = Symbol('S4_INGEST');
/** The ingest group's lag per shard (null with direct ingest): /readyz, queries' warnings, /v1/admin/shards. */
export const INGEST_LAG = Symbol('S4_INGEST_LAG');
