import { ROLES, type Role } from '@s4/core';
import { z } from 'zod';
import type { PolicyDefaults } from './namespaces.js';

/**
 * Every environment variable S4 reads, validated once at start. This module is the only reader
 * of process.env; docs/configuration.md lists the same variables.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The roles live in @s4/core (shared with infra/); re-exported for the app. */
export { ROLES, type Role };

const schema = z.object({
  S4_ROLE: z.enum(ROLES).default('all'),
  S4_HOST: z.string().min(1).default('0.0.0.0'),
  S4_PORT: int(0, 65_535).default(8080),
  S4_DATA_DIR: z.string().min(1).default('./data'),
  S4_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  S4_NAMESPACE: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lowercase letters, digits, _ and -, at most 63').default('default'),
  S4_SHARDS: int(1, 4096).default(16),
  S4_NAMESPACES_FILE: z.string().min(1).optional(),

  S4_REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  S4_REDIS_PASSWORD: z.string().optional(),
  S4_REDIS_CLUSTER: bool.default(false),
  S4_REDIS_TIMEOUT_MS: int(50, 600_000).default(5_000),
  S4_EMBEDDED_FSYNC: z.enum(['always', 'never']).default('always'),
  S4_RUNTIME_TUNING: bool.default(true),

  S4_S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name').optional(),
  S4_S3_PREFIX: z.string().regex(/^([A-Za-z0-9._-]+\/)*$/, 'empty or path segments ending with /').default(''),
  S4_S3_ENDPOINT: z.url().optional(),
  S4_S3_FORCE_PATH_STYLE: bool.default(false),
  S4_S3_MAX_SOCKETS: int(1, 4096).default(64),
  S4_S3_TIMEOUT_MS: int(100, 600_000).default(10_000),
  S4_S3_HEDGE_AFTER_MS: int(0, 600_000).default(1_000),
  AWS_REGION: z.string().min(1).default('us-east-1'),

  S4_FLUSH_INTERVAL_MS: int(100, 3_600_000).default(10_000),
  S4_FLUSH_GRACE_MS: int(0, 86_400_000).default(300_000),
  S4_FLUSH_BACKLOG_BYTES: int(0, 2 ** 40).default(32 * 1024 * 1024),
  S4_FLUSH_LATE_MS: int(0, 86_400_000).default(0),
  S4_LEASE_TTL_MS: int(1_000, 3_600_000).default(15_000),
  S4_ORPHAN_SWEEP_INTERVAL_MS: int(1_000, 7 * 86_400_000).default(3_600_000),
  S4_ORPHAN_GRACE_MS: int(60_000, 30 * 86_400_000).default(3_600_000),
  S4_COMPACT_INTERVAL_MS: int(1_000, 86_400_000).default(300_000),
  S4_COMPACT_MIN_PARTS: int(2, 100_000).default(2),
  S4_COMPACT_SETTLE_MS: int(0, 30 * 86_400_000).default(600_000),
  S4_COMPACT_DELETE_GRACE_MS: int(0, 30 * 86_400_000).default(600_000),
  S4_COMPACT_LOOKBACK_MS: int(3_600_000, 3650 * 86_400_000).default(7 * 86_400_000),
  S4_COMPACT_CONCURRENCY: int(1, 64).default(2),
  S4_COMPACT_DAY_AFTER_MS: int(0, 30 * 86_400_000).default(2 * 3_600_000),
  S4_ROLLUP_INTERVAL_MS: int(100, 86_400_000).default(60_000),
  S4_ROLLUP_LOOKBACK_MS: int(3_600_000, 3650 * 86_400_000).default(7 * 86_400_000),

  S4_QUERY_CONCURRENCY: int(1, 1024).default(32),
  S4_CACHE_BYTES: int(0, 2 ** 40).default(256 * 1024 * 1024),
  S4_SERIES_INDEX: bool.default(true),

  S4_API_KEYS: z
    .string()
    .transform((v) => v.split(',').map((k) => k.trim()).filter(Boolean))
    .pipe(z.array(z.string().min(16, 'each API key must be at least 16 characters')))
    .optional(),
  S4_API_KEYS_FILE: z.string().min(1).optional(),
  S4_PUBLIC_METRICS: bool.default(false),

  S4_MAX_BODY_BYTES: int(1024, 1024 ** 3).default(64 * 1024 * 1024),
  S4_MAX_SAMPLES_PER_REQUEST: int(1, 100_000_000).default(1_000_000),
  S4_MAX_FIELDS_PER_SAMPLE: int(1, 10_000).default(256),
  S4_MAX_RECORD_BYTES: int(16, 16 * 1024 * 1024).default(64 * 1024),
  S4_MAX_TAGS: int(0, 1024).default(32),
  S4_MAX_TAG_LENGTH: int(1, 65_536).default(256),
  S4_MAX_FUTURE_MS: int(0, 365 * 86_400_000).default(900_000),
  S4_MAX_QUERY_POINTS: int(1, 2 ** 40).default(50_000_000),
  S4_MAX_NESTING_DEPTH: int(1, 1_000).default(64),
  S4_REQUEST_TIMEOUT_MS: int(1_000, 3_600_000).default(120_000),
  S4_SERIES_CACHE_ENTRIES: int(1_024, 16_777_216).default(65_536),

  S4_INGEST: z.enum(['direct', 'kafka']).default('direct'),
  S4_KAFKA_BROKERS: z
    .string()
    .transform((v) => v.split(',').map((b) => b.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'each broker as host:port')).min(1))
    .optional(),
  S4_KAFKA_TOPIC_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, _ and -, at most 100').default('s4'),
  S4_KAFKA_CLIENT_ID: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/).default('s4'),
  S4_KAFKA_TLS: bool.default(false),
  S4_KAFKA_AUTH: z.enum(['none', 'aws-iam']).default('none'),
  S4_KAFKA_REPLICATION: int(0, 32).default(3),
  S4_KAFKA_RETENTION_MS: int(3_600_000, 365 * 86_400_000).default(7 * 86_400_000),
  S4_KAFKA_TIMEOUT_MS: int(100, 600_000).default(10_000),
  S4_INGEST_READY_LAG: int(0, 2 ** 40).default(1_000),
  S4_INGEST_LAG_INTERVAL_MS: int(100, 600_000).default(2_000),
  S4_INGEST_BATCH_BYTES: int(1024, 256 * 1024 * 1024).default(4 * 1024 * 1024),
  S4_INGEST_SESSION_TIMEOUT_MS: int(1_000, 3_600_000).default(10_000),
  S4_GRAPHITE_PORT: int(1, 65_535).optional(),
  S4_GRAPHITE_HOST: z.string().min(1).default('127.0.0.1'),
  S4_GRAPHITE_IDLE_TIMEOUT_MS: int(1_000, 86_400_000).default(120_000),
  S4_GRAPHITE_MAX_CONNECTIONS: int(1, 100_000).default(1_024),
});

export type RawEnv = Readonly<Record<string, string | undefined>>;

export interface Config {
  readonly role: Role;
  /**
   * The server entry re-executes itself once at start (same process id) with a smaller V8 young
   * generation and fewer glibc malloc arenas (apps/api/src/runtime.ts); false keeps the runtime's defaults.
   */
  readonly runtimeTuning: boolean;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly logLevel: z.infer<typeof schema>['S4_LOG_LEVEL'];
  readonly namespace: string;
  /**
   * Series the write path keeps the identity of (names checked, id hashed, key text and hot-log key
   * bytes), per generation of its two-generation caches: a working set up to this many series never
   * misses; at most twice this many are held (docs/configuration.md gives the bytes per series).
   */
  readonly seriesCacheEntries: number;
  readonly shards: number;
  /** Namespace policies (docs/namespaces.md), reloaded when the file changes; without it one namespace as above. */
  readonly namespacesFile: string | undefined;
  readonly hot:
    | {
        readonly kind: 'redis';
        readonly url: string;
        readonly password: string | undefined;
        readonly cluster: boolean;
        /** Connect and per-command timeout; a command that takes longer fails as unavailable. */
        readonly timeoutMs: number;
      }
    | { readonly kind: 'embedded'; readonly dir: string; readonly fsync: 'always' | 'never' };
  readonly objects:
    | {
        readonly kind: 's3';
        readonly bucket: string;
        readonly prefix: string;
        readonly endpoint: string | undefined;
        readonly forcePathStyle: boolean;
        readonly region: string;
        readonly maxSockets: number;
        /** Budget of one request (retries included) until S3 answers; bodies get more time by size. */
        readonly timeoutMs: number;
        /** A read with no answer after this long is sent again and the first answer wins; 0: never. */
        readonly hedgeAfterMs: number;
      }
    | { readonly kind: 'filesystem'; readonly dir: string };
  /** Bearer keys accepted on /v1/*; empty means no authentication. */
  readonly apiKeys: readonly string[];
  /** Scoped keys, stored as SHA-256 hashes (docs/security.md). */
  readonly apiKeysFile: string | undefined;
  /** /metrics and /openapi.json without a key even when keys are configured. */
  readonly publicMetrics: boolean;
  readonly flush: {
    readonly intervalMs: number;
    readonly graceMs: number;
    /**
     * A periodic pass that took at least this many bytes out of the hot tier is followed by the
     * next one after a second, not after `intervalMs` (0: never): closed windows that keep
     * receiving data (a backfill, a replay) are flushed as fast as the worker can, instead of
     * piling up in the hot tier's memory for an interval.
     */
    readonly backlogBytes: number;
    /**
     * Least time between two periodic flushes of one closed window: late samples into a window
     * flushed less than this ago wait in the hot tier (unless they are many bytes a series), so
     * many series each sending a late sample every scrape are not a flush of them all every pass.
     */
    readonly lateMs: number;
    readonly leaseTtlMs: number;
    /** How often the segment worker looks for parts that crashed flushes left unregistered (it LISTs). */
    readonly orphanSweepIntervalMs: number;
    /** How long such a part must stay unregistered before it is deleted. */
    readonly orphanGraceMs: number;
  };
  /** The compactor: folds the parts of a shard-window into one (libs/format/docs/format/keys.md, "Fold"). */
  readonly compact: {
    readonly intervalMs: number;
    readonly minParts: number;
    readonly settleMs: number;
    readonly deleteGraceMs: number;
    readonly lookbackMs: number;
    readonly concurrency: number;
    /** Fold a closed shard-day into one day object once it ended this long ago; 0: never. */
    readonly dayAfterMs: number;
  };
  /** The aggregation worker re-checks windows this far back on every pass (older late data is answered from raw data). */
  readonly rollup: { readonly intervalMs: number; readonly lookbackMs: number };
  readonly query: { readonly concurrency: number; readonly cacheBytes: number; readonly maxPoints: number; readonly seriesIndex: boolean };
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly maxSamplesPerRequest: number;
    readonly maxFieldsPerSample: number;
    readonly maxRecordBytes: number;
    readonly maxTags: number;
    readonly maxTagLength: number;
    readonly maxFutureMs: number;
    /** Levels of arrays/objects inside one field value. */
    readonly maxNestingDepth: number;
    /** Whole request, body included: slow or stalled senders are cut off. */
    readonly requestTimeoutMs: number;
  };
  /**
   * How writes reach the hot tier: `direct` (the API appends, 204) or `kafka` (the API produces to
   * the topic `<topicPrefix>.<namespace>`, partition = shard, 202; the ingest role consumes).
   */
  readonly ingest: {
    readonly mode: 'direct' | 'kafka';
    /** An ingest worker is ready, and a query warns about no shard, while each shard's lag (messages) is at most this. */
    readonly readyLag: number;
    /** How often the lag (end offset minus committed offset, per partition) is read. */
    readonly lagIntervalMs: number;
    /** Bytes the consumer fetches per partition and writes to the hot tier in one append. */
    readonly batchBytes: number;
    /** An ingest worker silent this long leaves the group and its shards move to the others. */
    readonly sessionTimeoutMs: number;
  };
  /** The Kafka cluster (set when S4_KAFKA_BROKERS is). */
  readonly kafka:
    | {
        readonly brokers: readonly string[];
        readonly topicPrefix: string;
        readonly clientId: string;
        readonly tls: boolean;
        /** `aws-iam`: SASL/OAUTHBEARER with a token signed by the task's AWS credentials (MSK). */
        readonly auth: 'none' | 'aws-iam';
        readonly region: string;
        /** Replication factor of the topics S4 creates; 0 leaves it to the cluster (MSK Serverless: 3). */
        readonly replication: number;
        readonly retentionMs: number;
        /** Budget of one produce, fetch of offsets or admin call; a slower broker answers 503. */
        readonly timeoutMs: number;
      }
    | undefined;
  /** Graphite plaintext over TCP (no authentication in the protocol: loopback by default); off without a port. */
  readonly graphite: { readonly port: number; readonly host: string; readonly idleTimeoutMs: number; readonly maxConnections: number } | undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parse the environment (only S4_* and AWS_REGION are read); throws ConfigError naming each bad variable. */
export function loadConfig(env: RawEnv = process.env): Config {
  const picked = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => (k.startsWith('S4_') || k === 'AWS_REGION') && v !== undefined && v !== ''),
  );
  const unknown = Object.keys(picked).filter((k) => k.startsWith('S4_') && !(k in schema.shape) && !IGNORED.has(k));
  const parsed = schema.safeParse(picked);
  const problems = unknown.map((k) => `${k}: unknown variable (see docs/configuration.md)`);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.')}=${JSON.stringify(picked[String(issue.path[0])] ?? '')}: ${issue.message}`);
  }
  if (parsed.success && parsed.data.S4_ORPHAN_GRACE_MS < parsed.data.S4_COMPACT_DELETE_GRACE_MS)
    // Parts a fold replaced are out of the catalog while readers may still read them: the
    // orphan sweeper must not take them before the compactor's own grace has passed.
    problems.push(`S4_ORPHAN_GRACE_MS=${parsed.data.S4_ORPHAN_GRACE_MS}: must be at least S4_COMPACT_DELETE_GRACE_MS=${parsed.data.S4_COMPACT_DELETE_GRACE_MS}`);
  if (parsed.success && parsed.data.S4_INGEST === 'kafka' && !parsed.data.S4_KAFKA_BROKERS)
    problems.push('S4_INGEST="kafka": needs S4_KAFKA_BROKERS (host:port,...)');
  if (parsed.success && parsed.data.S4_ROLE === 'ingest' && parsed.data.S4_INGEST !== 'kafka')
    problems.push('S4_ROLE="ingest": the ingest role consumes Kafka; set S4_INGEST=kafka and S4_KAFKA_BROKERS');
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const e = parsed.data;
  return Object.freeze({
    role: e.S4_ROLE,
    runtimeTuning: e.S4_RUNTIME_TUNING,
    host: e.S4_HOST,
    port: e.S4_PORT,
    dataDir: e.S4_DATA_DIR,
    logLevel: e.S4_LOG_LEVEL,
    namespace: e.S4_NAMESPACE,
    seriesCacheEntries: e.S4_SERIES_CACHE_ENTRIES,
    shards: e.S4_SHARDS,
    namespacesFile: e.S4_NAMESPACES_FILE,
    hot: e.S4_REDIS_URL
      ? { kind: 'redis', url: e.S4_REDIS_URL, password: e.S4_REDIS_PASSWORD, cluster: e.S4_REDIS_CLUSTER, timeoutMs: e.S4_REDIS_TIMEOUT_MS }
      : { kind: 'embedded', dir: `${e.S4_DATA_DIR}/hot`, fsync: e.S4_EMBEDDED_FSYNC },
    objects: e.S4_S3_BUCKET
      ? {
          kind: 's3',
          bucket: e.S4_S3_BUCKET,
          prefix: e.S4_S3_PREFIX,
          endpoint: e.S4_S3_ENDPOINT,
          forcePathStyle: e.S4_S3_FORCE_PATH_STYLE,
          region: e.AWS_REGION,
          maxSockets: e.S4_S3_MAX_SOCKETS,
          timeoutMs: e.S4_S3_TIMEOUT_MS,
          hedgeAfterMs: e.S4_S3_HEDGE_AFTER_MS,
        }
      : { kind: 'filesystem', dir: `${e.S4_DATA_DIR}/objects` },
    apiKeys: e.S4_API_KEYS ?? [],
    apiKeysFile: e.S4_API_KEYS_FILE,
    publicMetrics: e.S4_PUBLIC_METRICS,
    flush: {
      intervalMs: e.S4_FLUSH_INTERVAL_MS,
      graceMs: e.S4_FLUSH_GRACE_MS,
      backlogBytes: e.S4_FLUSH_BACKLOG_BYTES,
      lateMs: e.S4_FLUSH_LATE_MS,
      leaseTtlMs: e.S4_LEASE_TTL_MS,
      orphanSweepIntervalMs: e.S4_ORPHAN_SWEEP_INTERVAL_MS,
      orphanGraceMs: e.S4_ORPHAN_GRACE_MS,
    },
    compact: {
      intervalMs: e.S4_COMPACT_INTERVAL_MS,
      minParts: e.S4_COMPACT_MIN_PARTS,
      settleMs: e.S4_COMPACT_SETTLE_MS,
      deleteGraceMs: e.S4_COMPACT_DELETE_GRACE_MS,
      lookbackMs: e.S4_COMPACT_LOOKBACK_MS,
      concurrency: e.S4_COMPACT_CONCURRENCY,
      dayAfterMs: e.S4_COMPACT_DAY_AFTER_MS,
    },
    rollup: { intervalMs: e.S4_ROLLUP_INTERVAL_MS, lookbackMs: e.S4_ROLLUP_LOOKBACK_MS },
    query: { concurrency: e.S4_QUERY_CONCURRENCY, cacheBytes: e.S4_CACHE_BYTES, maxPoints: e.S4_MAX_QUERY_POINTS, seriesIndex: e.S4_SERIES_INDEX },
    limits: {
      maxBodyBytes: e.S4_MAX_BODY_BYTES,
      maxSamplesPerRequest: e.S4_MAX_SAMPLES_PER_REQUEST,
      maxFieldsPerSample: e.S4_MAX_FIELDS_PER_SAMPLE,
      maxRecordBytes: e.S4_MAX_RECORD_BYTES,
      maxTags: e.S4_MAX_TAGS,
      maxTagLength: e.S4_MAX_TAG_LENGTH,
      maxFutureMs: e.S4_MAX_FUTURE_MS,
      maxNestingDepth: e.S4_MAX_NESTING_DEPTH,
      requestTimeoutMs: e.S4_REQUEST_TIMEOUT_MS,
    },
    ingest: { mode: e.S4_INGEST, readyLag: e.S4_INGEST_READY_LAG, lagIntervalMs: e.S4_INGEST_LAG_INTERVAL_MS, batchBytes: e.S4_INGEST_BATCH_BYTES, sessionTimeoutMs: e.S4_INGEST_SESSION_TIMEOUT_MS },
    kafka: e.S4_KAFKA_BROKERS
      ? {
          brokers: e.S4_KAFKA_BROKERS,
          topicPrefix: e.S4_KAFKA_TOPIC_PREFIX,
          clientId: e.S4_KAFKA_CLIENT_ID,
          tls: e.S4_KAFKA_TLS,
          auth: e.S4_KAFKA_AUTH,
          region: e.AWS_REGION,
          replication: e.S4_KAFKA_REPLICATION,
          retentionMs: e.S4_KAFKA_RETENTION_MS,
          timeoutMs: e.S4_KAFKA_TIMEOUT_MS,
        }
      : undefined,
    graphite:
      e.S4_GRAPHITE_PORT === undefined
        ? undefined
        : { port: e.S4_GRAPHITE_PORT, host: e.S4_GRAPHITE_HOST, idleTimeoutMs: e.S4_GRAPHITE_IDLE_TIMEOUT_MS, maxConnections: e.S4_GRAPHITE_MAX_CONNECTIONS },
  } satisfies Config);
}

/** Variables read by tools around the server (test scripts, benches), not by the server. */
const IGNORED = new Set(['S4_SERVICES_DIR', 'S4_SERVICES_CACHE', 'S4_STOP_TIMEOUT', 'S4_URL']);

/** The config as a log line may show it: secrets and credentials in URLs replaced. */
export function redactConfig(config: Config): unknown {
  return JSON.parse(
    JSON.stringify(config, (key, value: unknown) => {
      if (key === 'apiKeys') return Array.isArray(value) ? value.map(() => '***') : value;
      if (key === 'password') return value === undefined ? undefined : '***';
      if (key === 'url' && typeof value === 'string') return value.replace(/\/\/[^@/]*@/, '//***@');
      return value;
    }),
  );
}

/** What a namespace of the policy file gets for what it leaves out. */
export function policyDefaults(config: Config): PolicyDefaults {
  return {
    defaultNamespace: config.namespace,
    shards: config.shards,
    hotMs: config.flush.graceMs,
    maxFields: config.limits.maxFieldsPerSample,
    maxRecordBytes: config.limits.maxRecordBytes,
  };
}
