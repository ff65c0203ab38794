import { S3_STANDARD_PRICES, type NamespacePolicies, type NamespacePolicy } from '@s4/core';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * The namespace policy file (S4_NAMESPACES_FILE, docs/namespaces.md): JSON, or YAML when the
 * name ends in .yaml/.yml. Validated here; the values every layer shares are @s4/core's
 * NamespacePolicies.
 */

/** Durations are `<integer><unit>` with ms, s, m, h, d or y (365 d), e.g. `90d`, `5m`. */
const UNITS = new Map([
  ['ms', 1],
  ['s', 1_000],
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
  ['y', 365 * 86_400_000],
]);

export function parseDuration(text: string): number | null {
  const m = /^(\d{1,12})(ms|s|m|h|d|y)$/.exec(text);
  return m ? Number(m[1]) * UNITS.get(m[2]!)! : null;
}

const duration = z.string().transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `"${v}" is not a duration: write e.g. 500ms, 30s, 5m, 12h, 90d, 2y` });
    return z.NEVER;
  }
  return ms;
});
/** A retention: a duration, or `forever`. */
const retention = z.string().transform((v, ctx): number | null => {
  if (v === 'forever') return null;
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `"${v}" is not a retention: write forever, or a duration such as 30d, 12h, 2y` });
    return z.NEVER;
  }
  return ms;
});
const count = z.number().int().min(1);

export const NAMESPACE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** The rollup resolutions the aggregation worker stores (libs/engine rollup/resolutions.ts). */
export const POLICY_RESOLUTIONS = ['1m', '1h'] as const;

const namespaceSchema = z.strictObject({
  name: z.string().regex(NAMESPACE_NAME, 'lowercase letters, digits, _ and -, at most 63'),
  prefixes: z.array(z.string().min(1, 'an empty prefix would match every metric: leave it to the default namespace')).default([]),
  shards: z.number().int().min(1).max(4096).optional(),
  rawRetention: retention.default(null),
  rollups: z
    .array(z.strictObject({ resolution: z.enum(POLICY_RESOLUTIONS), retention: retention.default(null) }))
    .default([
      { resolution: '1m', retention: null },
      { resolution: '1h', retention: null },
    ]),
  backfill: duration.optional(),
  hot: duration.optional(),
  limits: z
    .strictObject({
      maxActiveSeries: count.optional(),
      maxNewSeriesPerMinute: count.optional(),
      maxFields: count.optional(),
      maxRecordBytes: count.optional(),
      maxSamplesPerSecond: count.optional(),
    })
    .default({}),
});

const fileSchema = z.strictObject({
  defaultNamespace: z.string().regex(NAMESPACE_NAME).optional(),
  prices: z
    .strictObject({
      storageGbMonth: z.number().min(0).default(S3_STANDARD_PRICES.storageGbMonth),
      putPer1000: z.number().min(0).default(S3_STANDARD_PRICES.putPer1000),
      getPer1000: z.number().min(0).default(S3_STANDARD_PRICES.getPer1000),
    })
    .default(S3_STANDARD_PRICES),
  namespaces: z.array(namespaceSchema).min(1),
});

/** What a namespace gets for what its entry leaves out: the process's settings. */
export interface PolicyDefaults {
  readonly defaultNamespace: string;
  readonly shards: number;
  /** S4_FLUSH_GRACE_MS. */
  readonly hotMs: number;
  /** S4_MAX_FIELDS_PER_SAMPLE, S4_MAX_RECORD_BYTES: also the ceilings a namespace may not exceed. */
  readonly maxFields: number;
  readonly maxRecordBytes: number;
}

/** Without a file: one namespace, as S4 always behaved (everything forever, no series limits). */
export function singleNamespace(d: PolicyDefaults): NamespacePolicies {
  return { defaultNamespace: d.defaultNamespace, prices: S3_STANDARD_PRICES, namespaces: [defaultPolicy(d.defaultNamespace, d)] };
}

function defaultPolicy(name: string, d: PolicyDefaults): NamespacePolicy {
  return {
    name,
    prefixes: [],
    shards: d.shards,
    rawRetentionMs: null,
    rollups: [
      { resolution: '1m', retentionMs: null },
      { resolution: '1h', retentionMs: null },
    ],
    backfillMs: Number.MAX_SAFE_INTEGER,
    hotMs: d.hotMs,
    limits: { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxFields: d.maxFields, maxRecordBytes: d.maxRecordBytes, maxSamplesPerSecond: undefined },
  };
}

export class NamespacesFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`namespaces file ${file}: ${problems.join('; ')}`);
    this.name = 'NamespacesFileError';
  }
}

/**
 * Parse and validate the text of a policy file; throws NamespacesFileError naming every problem
 * (`namespaces.1.rawRetention: ...`). `file` names the file in messages and picks the syntax.
 */
export function parseNamespaces(file: string, text: string, d: PolicyDefaults): NamespacePolicies {
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    throw new NamespacesFileError(file, [`cannot be parsed: ${(e as Error).message.split('\n')[0]}`]);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) throw new NamespacesFileError(file, parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`));
  const f = parsed.data;
  const problems: string[] = [];
  const defaultNamespace = f.defaultNamespace ?? d.defaultNamespace;
  const names = new Set<string>();
  const prefixOwner = new Map<string, string>();
  const namespaces = f.namespaces.map((n, i): NamespacePolicy => {
    const at = `namespaces.${i}`;
    if (names.has(n.name)) problems.push(`${at}.name: namespace ${n.name} is listed twice`);
    names.add(n.name);
    for (const p of n.prefixes) {
      const other = prefixOwner.get(p);
      if (other !== undefined) problems.push(`${at}.prefixes: prefix "${p}" is also ${other}'s; a prefix belongs to one namespace`);
      prefixOwner.set(p, n.name);
    }
    const base = defaultPolicy(n.name, d);
    const l = n.limits;
    if (l.maxFields !== undefined && l.maxFields > d.maxFields) problems.push(`${at}.limits.maxFields: ${l.maxFields} is above S4_MAX_FIELDS_PER_SAMPLE=${d.maxFields}`);
    if (l.maxRecordBytes !== undefined && l.maxRecordBytes > d.maxRecordBytes) problems.push(`${at}.limits.maxRecordBytes: ${l.maxRecordBytes} is above S4_MAX_RECORD_BYTES=${d.maxRecordBytes}`);
    const seen = new Set<string>();
    for (const r of n.rollups) {
      if (seen.has(r.resolution)) problems.push(`${at}.rollups: resolution ${r.resolution} is listed twice`);
      seen.add(r.resolution);
    }
    // Without a backfill window, writes may be as old as the raw retention keeps.
    const backfillMs = n.backfill ?? n.rawRetention ?? base.backfillMs;
    // A write older than the retention would be flushed only to be deleted by the next retention pass.
    if (n.rawRetention !== null && backfillMs > n.rawRetention) problems.push(`${at}.backfill: must not be longer than rawRetention (a write older than the retention would be deleted at once)`);
    return {
      name: n.name,
      prefixes: n.prefixes,
      shards: n.shards ?? d.shards,
      rawRetentionMs: n.rawRetention,
      rollups: n.rollups.map((r) => ({ resolution: r.resolution, retentionMs: r.retention })),
      backfillMs,
      hotMs: n.hot ?? base.hotMs,
      limits: {
        maxActiveSeries: l.maxActiveSeries,
        maxNewSeriesPerMinute: l.maxNewSeriesPerMinute,
        maxFields: l.maxFields ?? d.maxFields,
        maxRecordBytes: l.maxRecordBytes ?? d.maxRecordBytes,
        maxSamplesPerSecond: l.maxSamplesPerSecond,
      },
    };
  });
  if (!names.has(defaultNamespace)) {
    if (f.defaultNamespace !== undefined) problems.push(`defaultNamespace: ${defaultNamespace} is not among the namespaces`);
    // The process's namespace (S4_NAMESPACE) catches the rest with the process's settings.
    else namespaces.push(defaultPolicy(defaultNamespace, d));
  }
  if (problems.length > 0) throw new NamespacesFileError(file, problems);
  return { defaultNamespace, prices: f.prices, namespaces };
}

/**
 * Why `next` may not replace `current` in a running process, or [] when it may: a namespace's
 * shard count decides where every series lives, so changing it would hide data (no migration
 * exists yet); a namespace that disappears would hide its data the same way.
 */
export function refusedChanges(current: NamespacePolicies, next: NamespacePolicies): string[] {
  const problems: string[] = [];
  const nextByName = new Map(next.namespaces.map((n) => [n.name, n]));
  for (const n of current.namespaces) {
    const m = nextByName.get(n.name);
    if (!m) problems.push(`namespace ${n.name} was removed: its data would become unreachable (keep it, with no prefixes, to stop routing new metrics there)`);
    else if (m.shards !== n.shards)
      problems.push(`namespace ${n.name}: shards ${n.shards} -> ${m.shards} refused; the shard count of a namespace is fixed (no migration exists yet)`);
  }
  return problems;
}
