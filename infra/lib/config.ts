import { PLANNED_ROLES, ROLES, isRole, type Role } from '@s4/core';
import { z } from 'zod';
import { lifecycleFromPolicies, readPolicyFile, type NamespaceLifecycle } from './namespaces.js';

/**
 * Settings of every environment, in one typed file, validated with zod when the app starts.
 * `cdk synth -c env=<name>` picks one. Change the values below (or add an environment) and the
 * schema tells you at synth time, naming the field, when something does not fit.
 */

export const ENVIRONMENT_NAMES = ['dev', 'staging', 'prod'] as const;
export type EnvironmentName = (typeof ENVIRONMENT_NAMES)[number];

/**
 * Worker services run the one image with S4_ROLE set to one role. The roles come from @s4/core:
 * every role the app implements except `all` and `api` (those are the API service's) is
 * deployable; planned roles are accepted by the schema so that the synth can name them and refuse
 * them (the app would refuse the S4_ROLE and the task would never start). No role is planned
 * today; one added to PLANNED_ROLES goes into this type again (`| PlannedRole`).
 */
export type WorkerRole = Exclude<Role, 'all' | 'api'>;

/** Worker roles the app implements: ROLES without `all` and `api`. */
export const DEPLOYABLE_WORKER_ROLES: readonly Exclude<Role, 'all' | 'api'>[] = ROLES.filter(
  (r): r is Exclude<Role, 'all' | 'api'> => r !== 'all' && r !== 'api',
);

/** Every worker role the settings may name: the deployable ones and the planned ones. */
export const WORKER_ROLES = [...new Set<WorkerRole>([...DEPLOYABLE_WORKER_ROLES, ...PLANNED_ROLES])] as [WorkerRole, ...WorkerRole[]];

/** Why a role cannot be deployed yet, or undefined when the app implements it. */
export function notBuilt(role: string): string | undefined {
  if (isRole(role)) return undefined;
  return `the ${role} role is planned, not built yet: the app refuses S4_ROLE=${role}`;
}

const nsName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lowercase letters, digits, _ and -, at most 63');
const days = z.number().int().min(1).max(36_500);
/** Fargate task sizes that exist (cpu units → allowed memory MiB are checked below). */
const cpu = z.union([z.literal(256), z.literal(512), z.literal(1024), z.literal(2048), z.literal(4096), z.literal(8192), z.literal(16384)]);

/** Fargate memory (MiB) allowed per CPU size: [min, max, step]. */
const FARGATE_MEMORY: Record<number, readonly [number, number, number]> = {
  256: [512, 2048, 512],
  512: [1024, 4096, 1024],
  1024: [2048, 8192, 1024],
  2048: [4096, 16384, 1024],
  4096: [8192, 30720, 1024],
  8192: [16384, 61440, 4096],
  16384: [32768, 122880, 8192],
};

export function isFargateSize(cpuUnits: number, memoryMiB: number): boolean {
  const range = FARGATE_MEMORY[cpuUnits];
  if (!range) return false;
  const [min, max, step] = range;
  return memoryMiB >= min && memoryMiB <= max && memoryMiB % step === 0 && !(cpuUnits === 256 && memoryMiB === 1536);
}

const taskSize = z
  .object({ cpu, memoryMiB: z.number().int() })
  .refine(({ cpu: c, memoryMiB: m }) => isFargateSize(c, m), 'not a Fargate cpu/memory combination');

export const namespaceSchema = z.object({
  name: nsName,
  /** Raw segments (`v1/<ns>/seg/`) and catalogs (`v1/<ns>/cat/`) expire after this many days. */
  rawRetentionDays: days,
  /** Rollups (`v1/<ns>/rollup/`) expire after this many days. */
  rollupRetentionDays: days,
});
export type NamespaceSettings = z.infer<typeof namespaceSchema>;

const memoryDb = z.object({
  engine: z.literal('memorydb'),
  /** e.g. db.t4g.small, db.r7g.large */
  nodeType: z.string().regex(/^db\.[a-z0-9]+\.[a-z0-9]+$/),
  shards: z.number().int().min(1).max(500).default(1),
  /** 0 = a single node per shard; ≥ 1 places replicas in other AZs (multi-AZ). */
  replicasPerShard: z.number().int().min(0).max(5).default(0),
  engineVersion: z.string().default('7.3'),
  snapshotRetentionDays: z.number().int().min(0).max(35).default(0),
  /** Alarm when DatabaseMemoryUsagePercentage exceeds this. */
  memoryAlarmPercent: z.number().min(1).max(100).default(80),
});

const elastiCacheServerless = z.object({
  engine: z.literal('elasticache-serverless'),
  /** Valkey (default, cheaper) or Redis OSS. */
  flavour: z.enum(['valkey', 'redis']).default('valkey'),
  majorEngineVersion: z.string().default('8'),
  /** Upper bound for data stored; the memory alarm fires at memoryAlarmPercent of it. */
  maxDataGb: z.number().int().min(1).max(5000).default(5),
  snapshotRetentionDays: z.number().int().min(0).max(35).default(0),
  memoryAlarmPercent: z.number().min(1).max(100).default(80),
});

export const settingsSchema = z
  .object({
    name: z.enum(ENVIRONMENT_NAMES),
    /** Account to deploy to; when absent the CLI's credentials decide (CDK_DEFAULT_ACCOUNT). */
    account: z.string().regex(/^\d{12}$/).optional(),
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/),
    /** CloudFormation stack name. */
    stackName: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/),
    /** Tags added to every resource. */
    tags: z.record(z.string(), z.string()).default({}),
    /** RETAIN keeps the bucket, hot tier snapshots and secrets when the stack is destroyed. */
    removalPolicy: z.enum(['retain', 'destroy']),

    network: z.object({
      /** The VPC's address range (also the default allowed client range of an internal API). */
      cidr: z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/(1[6-9]|2[0-4])$/).default('10.40.0.0/16'),
      maxAzs: z.number().int().min(2).max(3).default(2),
      /** NAT gateways for image pulls, Secrets Manager, logs (S3 uses a free gateway endpoint). */
      natGateways: z.number().int().min(1).max(3).default(1),
      /** Which VPC flow-log records to keep (REJECT is cheap, ALL is thorough). */
      flowLogTraffic: z.enum(['ALL', 'REJECT']).default('REJECT'),
    }),

    bucket: z.object({
      /** Leave out to let CloudFormation name it (recommended: names are global). */
      bucketName: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).optional(),
      /** S4_S3_PREFIX: empty, or path segments ending with `/`. */
      prefix: z.string().regex(/^([A-Za-z0-9._-]+\/)*$/).default(''),
      /** s3 = SSE-S3 (no per-request KMS cost); kms = a customer managed key created by the stack. */
      encryption: z.enum(['s3', 'kms']).default('s3'),
      /** Move segment and rollup objects to Intelligent-Tiering after this many days (off when absent). */
      intelligentTieringAfterDays: z.number().int().min(0).max(36_500).optional(),
      /** Abort multipart uploads left incomplete after this many days. */
      abortIncompleteUploadDays: z.number().int().min(1).max(365).default(1),
      /** S3 server access logs and ALB access logs into a separate log bucket. */
      accessLogs: z.boolean(),
      accessLogRetentionDays: days.default(90),
    }),

    /**
     * The namespace policy file the containers run with (S4_NAMESPACES_FILE; path from the
     * repository root). Lifecycle rules and IAM prefixes are derived from it with the engine's own
     * parser, so S3 never expires what the engine still keeps (docs/namespaces.md). Give this or
     * `namespaces`, not both.
     */
    namespacesFile: z.string().min(1).optional(),
    /** Without a policy file: namespaces and S3 expiry days, taken as given (the engine keeps its data forever then). */
    namespaces: z.array(namespaceSchema).min(1).optional(),
    /** S4_NAMESPACE: the namespace unmatched series land in. Must be one of `namespaces`. */
    defaultNamespace: nsName.default('default'),
    /** S4_SHARDS: fixed at first start of a store (recorded in v1/manifest.json). */
    shards: z.number().int().min(1).max(4096).default(16),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
    /** Further non-secret S4_* variables passed to every container (e.g. S4_FLUSH_INTERVAL_MS). */
    extraEnv: z.record(z.string().regex(/^S4_[A-Z0-9_]+$/), z.string()).default({}),

    hotTier: z.discriminatedUnion('engine', [memoryDb, elastiCacheServerless]),

    image: z
      .discriminatedUnion('source', [
        /** Build the repository's Dockerfile during `cdk deploy` (needs Docker where you deploy). */
        z.object({ source: z.literal('asset') }),
        /** Use an image already pushed to ECR (e.g. by CI). */
        z.object({ source: z.literal('ecr'), repositoryName: z.string().min(2), tag: z.string().min(1) }),
      ])
      .default({ source: 'asset' }),
    /** Fargate CPU architecture; arm64 (Graviton) costs ~20 % less but needs an arm64 image build. */
    cpuArchitecture: z.enum(['x86_64', 'arm64']).default('x86_64'),
    containerInsights: z.boolean(),

    api: z.object({
      /** `api` (split deployment, S3 read-only) or `all` (API and every worker in one task). */
      role: z.enum(['api', 'all']).default('api'),
      size: taskSize,
      minTasks: z.number().int().min(1).max(100),
      maxTasks: z.number().int().min(1).max(500),
      cpuTargetPercent: z.number().int().min(10).max(95).default(60),
      requestsPerTargetPerMinute: z.number().int().min(10).default(6000),
      /** internal = reachable only inside the VPC (and peered networks / VPN). */
      internetFacing: z.boolean().default(false),
      /** Who may reach the load balancer; defaults to the VPC's own CIDR. */
      allowedCidrs: z.array(z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/)).optional(),
      /** ACM certificate for HTTPS; without one the listener is plain HTTP (dev only). */
      certificateArn: z.string().startsWith('arn:aws').optional(),
    }),

    workers: z.object({
      /**
       * Worker services to run. Default: every deployable worker role (segment + aggregate), none
       * when api.role is `all`. Planned roles are refused until the app has them; ingest needs kafka.enabled.
       */
      roles: z.array(z.enum(WORKER_ROLES)).optional(),
      size: taskSize,
      /** Tasks per worker role; shards are spread over them by lease. */
      tasksPerRole: z.number().int().min(1).max(100).default(1),
      /** Run workers on Fargate Spot (crash-safe by design: leases and idempotent flushes). */
      spot: z.boolean().default(false),
    }),

    /**
     * Optional MSK Serverless cluster for the pull ingest path: with it, the API produces every
     * write to Kafka (S4_INGEST=kafka, 202) and the `ingest` workers consume it into the hot tier.
     */
    kafka: z
      .object({
        enabled: z.boolean(),
      })
      .default({ enabled: false }),

    observability: z.object({
      logRetentionDays: z.number().int().min(1).max(3653),
      /** E-mail address that receives alarm notifications (optional). */
      alarmEmail: z.string().email().optional(),
      /** API 5xx responses as a percentage of requests, over 5 minutes. */
      api5xxPercent: z.number().min(0.1).max(100).default(5),
      /** Alarm when the oldest unflushed window is older than this. */
      flushLagAlarmSeconds: z.number().int().min(60).default(1800),
      /** Prometheus metric (gauge, seconds) that S4 exposes on /metrics for the flush lag. */
      flushLagMetric: z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/).default('s4_flush_lag_seconds'),
      /** ADOT collector sidecar that turns /metrics into CloudWatch metrics. */
      collectorImage: z.string().default('public.ecr.aws/aws-observability/aws-otel-collector:v0.42.0'),
    }),
  })
  .superRefine((s, ctx) => {
    if ((s.namespacesFile === undefined) === (s.namespaces === undefined))
      ctx.addIssue({ code: 'custom', path: ['namespaces'], message: 'give namespaces or namespacesFile (not both)' });
    const names = (s.namespaces ?? []).map((n) => n.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup) ctx.addIssue({ code: 'custom', path: ['namespaces'], message: `namespace "${dup}" listed twice` });
    if (s.namespaces && !names.includes(s.defaultNamespace)) {
      ctx.addIssue({ code: 'custom', path: ['defaultNamespace'], message: `"${s.defaultNamespace}" is not in namespaces` });
    }
    if (s.api.minTasks > s.api.maxTasks) ctx.addIssue({ code: 'custom', path: ['api', 'minTasks'], message: 'greater than maxTasks' });
    for (const role of new Set(s.workers.roles ?? [])) {
      const problem = notBuilt(role);
      if (problem) ctx.addIssue({ code: 'custom', path: ['workers', 'roles'], message: problem });
    }
    if (s.workers.roles?.includes('ingest') && !s.kafka.enabled) {
      ctx.addIssue({ code: 'custom', path: ['workers', 'roles'], message: 'the ingest role needs kafka.enabled' });
    }
    if (s.kafka.enabled && s.api.role === 'api' && s.workers.roles && !s.workers.roles.includes('ingest')) {
      // The API would produce to Kafka and nothing would write those samples to the hot tier.
      ctx.addIssue({ code: 'custom', path: ['workers', 'roles'], message: 'with kafka.enabled the API writes to Kafka: the ingest role must run' });
    }
    if (s.api.internetFacing && !s.api.certificateArn) {
      ctx.addIssue({ code: 'custom', path: ['api', 'certificateArn'], message: 'an internet-facing API needs HTTPS' });
    }
    if (s.hotTier.engine === 'memorydb' && s.name === 'prod' && s.hotTier.replicasPerShard < 1) {
      ctx.addIssue({ code: 'custom', path: ['hotTier', 'replicasPerShard'], message: 'prod needs ≥ 1 replica (multi-AZ)' });
    }
    for (const key of Object.keys(s.extraEnv)) {
      if (MANAGED_ENV.has(key)) ctx.addIssue({ code: 'custom', path: ['extraEnv', key], message: 'set by the stack itself' });
    }
  })
  .transform((s, ctx) => {
    let lifecycle: NamespaceLifecycle[];
    let defaultNamespace = s.defaultNamespace;
    if (s.namespacesFile !== undefined) {
      try {
        const policies = readPolicyFile(s.namespacesFile, { defaultNamespace: s.defaultNamespace, shards: s.shards });
        const grace = Number(s.extraEnv.S4_COMPACT_DELETE_GRACE_MS ?? COMPACT_DELETE_GRACE_MS);
        lifecycle = lifecycleFromPolicies(policies, grace);
        defaultNamespace = policies.defaultNamespace;
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['namespacesFile'], message: (e as Error).message });
        return z.NEVER;
      }
    } else lifecycle = (s.namespaces ?? []).map((n) => ({ name: n.name, segDays: n.rawRetentionDays, catDays: n.rawRetentionDays, rollupDays: n.rollupRetentionDays }));
    return { ...s, defaultNamespace, lifecycle, namespaceNames: lifecycle.map((n) => n.name), workers: {
      ...s.workers,
      roles: [...new Set(s.workers.roles ?? defaultWorkerRoles(s.kafka.enabled, s.api.role))],
    } };
  });

/** The app's default S4_COMPACT_DELETE_GRACE_MS (libs/config). */
const COMPACT_DELETE_GRACE_MS = 600_000;

export type Settings = z.output<typeof settingsSchema>;
export type SettingsInput = z.input<typeof settingsSchema>;

/** Variables the stack sets (or injects as secrets) itself; extraEnv may not override them. */
const MANAGED_ENV = new Set([
  'S4_ROLE', 'S4_HOST', 'S4_PORT', 'S4_DATA_DIR', 'S4_LOG_LEVEL', 'S4_NAMESPACE', 'S4_SHARDS', 'S4_REDIS_URL',
  'S4_REDIS_PASSWORD', 'S4_S3_BUCKET', 'S4_S3_PREFIX', 'S4_S3_ENDPOINT', 'S4_API_KEYS', 'S4_KAFKA_BROKERS',
  'S4_INGEST', 'S4_KAFKA_TLS', 'S4_KAFKA_AUTH', 'S4_KAFKA_REPLICATION',
]);

/**
 * Every deployable worker role (ingest only with Kafka); none when the API task runs every role
 * (`all`).
 */
export function defaultWorkerRoles(kafka: boolean, apiRole: 'api' | 'all'): WorkerRole[] {
  if (apiRole === 'all') return [];
  return DEPLOYABLE_WORKER_ROLES.filter((r: string) => kafka || r !== 'ingest');
}

const DEFAULT_NAMESPACES: NamespaceSettings[] = [
  { name: 'default', rawRetentionDays: 400, rollupRetentionDays: 1825 },
];

/** The environments. Edit here. */
export const ENVIRONMENTS: Record<EnvironmentName, SettingsInput> = {
  dev: {
    name: 'dev',
    region: 'us-east-1',
    stackName: 'S4-dev',
    removalPolicy: 'destroy',
    network: { maxAzs: 2, natGateways: 1, flowLogTraffic: 'REJECT' },
    bucket: { encryption: 's3', accessLogs: false },
    namespaces: [{ name: 'default', rawRetentionDays: 14, rollupRetentionDays: 30 }],
    hotTier: { engine: 'elasticache-serverless', flavour: 'valkey', maxDataGb: 1 },
    containerInsights: false,
    // One task runs the API and every worker: the cheapest shape that exercises the real path.
    api: { role: 'all', size: { cpu: 512, memoryMiB: 1024 }, minTasks: 1, maxTasks: 2 },
    workers: { size: { cpu: 256, memoryMiB: 512 }, spot: true },
    observability: { logRetentionDays: 7 },
  },
  staging: {
    name: 'staging',
    region: 'us-east-1',
    stackName: 'S4-staging',
    removalPolicy: 'destroy',
    network: { maxAzs: 2, natGateways: 1, flowLogTraffic: 'REJECT' },
    bucket: { encryption: 's3', accessLogs: true, intelligentTieringAfterDays: 30, accessLogRetentionDays: 30 },
    namespaces: [
      { name: 'default', rawRetentionDays: 30, rollupRetentionDays: 90 },
      { name: 'iot', rawRetentionDays: 60, rollupRetentionDays: 365 },
    ],
    hotTier: { engine: 'memorydb', nodeType: 'db.t4g.small', shards: 1, replicasPerShard: 0 },
    containerInsights: true,
    api: { role: 'api', size: { cpu: 1024, memoryMiB: 2048 }, minTasks: 1, maxTasks: 4 },
    workers: { size: { cpu: 512, memoryMiB: 1024 }, spot: true },
    observability: { logRetentionDays: 30 },
  },
  prod: {
    name: 'prod',
    region: 'us-east-1',
    stackName: 'S4-prod',
    removalPolicy: 'retain',
    network: { maxAzs: 3, natGateways: 2, flowLogTraffic: 'ALL' },
    bucket: { encryption: 'kms', accessLogs: true, intelligentTieringAfterDays: 30, accessLogRetentionDays: 365 },
    namespaces: [
      ...DEFAULT_NAMESPACES,
      { name: 'iot', rawRetentionDays: 730, rollupRetentionDays: 1825 },
    ],
    hotTier: { engine: 'memorydb', nodeType: 'db.r7g.large', shards: 2, replicasPerShard: 1, snapshotRetentionDays: 7 },
    containerInsights: true,
    api: { role: 'api', size: { cpu: 2048, memoryMiB: 4096 }, minTasks: 2, maxTasks: 20 },
    workers: { size: { cpu: 1024, memoryMiB: 4096 }, tasksPerRole: 2, spot: false },
    observability: { logRetentionDays: 365, api5xxPercent: 1, flushLagAlarmSeconds: 900 },
  },
};

export class SettingsError extends Error {
  constructor(env: string, problems: string[]) {
    super(`invalid settings for environment "${env}":\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

/** Validate one environment's settings; throws SettingsError naming every bad field. */
export function parseSettings(env: string, input: unknown): Settings {
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success) {
    throw new SettingsError(env, parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return parsed.data;
}

/** The settings for `-c env=<name>`. */
export function loadSettings(env: string | undefined): Settings {
  if (!env) throw new SettingsError('(none)', [`pass -c env=<${ENVIRONMENT_NAMES.join('|')}>`]);
  if (!(ENVIRONMENT_NAMES as readonly string[]).includes(env)) {
    throw new SettingsError(env, [`unknown environment; choose one of ${ENVIRONMENT_NAMES.join(', ')}`]);
  }
  return parseSettings(env, ENVIRONMENTS[env as EnvironmentName]);
}
