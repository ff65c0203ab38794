/**
 * Namespaces: named sets of storage policies (ARCHITECTURE.md, "Data model"). A series belongs to
 * the namespace whose metric prefix is the longest one matching its metric; the default namespace
 * catches the rest. The file format and its validation are in libs/config (namespaces.ts); these
 * are the validated values every layer shares, infra included (its S3 lifecycle rules are derived
 * here, from the same numbers the engine's retention uses).
 */
import { DAY_MS } from './time.js';

/** Per-namespace limits; `undefined` is unlimited. */
export interface NamespaceLimits {
  /** Series written within the last hour (ACTIVE_SERIES_MS). */
  readonly maxActiveSeries: number | undefined;
  /** Series first seen within one minute. */
  readonly maxNewSeriesPerMinute: number | undefined;
  /** Fields of one sample. */
  readonly maxFields: number;
  /** Encoded bytes of one sample (at most S4_MAX_RECORD_BYTES). */
  readonly maxRecordBytes: number;
  /** Samples per second accepted by one API process (a token bucket with a one-second burst). */
  readonly maxSamplesPerSecond: number | undefined;
}

/** One stored rollup resolution and how long it is kept (null: forever). */
export interface RollupPolicy {
  readonly resolution: string;
  readonly retentionMs: number | null;
}

export interface NamespacePolicy {
  readonly name: string;
  /** Metric prefixes that route here; the default namespace may have none. */
  readonly prefixes: readonly string[];
  readonly shards: number;
  /** Raw segments (and their catalog entries) are deleted once their window ended this long ago; null: kept forever. */
  readonly rawRetentionMs: number | null;
  /** Resolutions the aggregation worker computes for this namespace ([] turns rollups off). */
  readonly rollups: readonly RollupPolicy[];
  /** A write may be at most this old (relative to the server's clock). */
  readonly backfillMs: number;
  /** How long a closed window stays in the hot tier before it is flushed (the flush grace). */
  readonly hotMs: number;
  readonly limits: NamespaceLimits;
}

/** S3 list prices in US dollars, for the cost report. */
export interface Prices {
  readonly storageGbMonth: number;
  readonly putPer1000: number;
  readonly getPer1000: number;
}

/** S3 Standard list prices, us-east-1 (first 50 TB tier), as published in 2026. */
export const S3_STANDARD_PRICES: Prices = { storageGbMonth: 0.023, putPer1000: 0.005, getPer1000: 0.0004 };

export interface NamespacePolicies {
  /** Name of the namespace that catches metrics no prefix matches. */
  readonly defaultNamespace: string;
  /** Every namespace, the default one included, in file order. */
  readonly namespaces: readonly NamespacePolicy[];
  readonly prices: Prices;
}

/** A series is active while it was written within this long. */
export const ACTIVE_SERIES_MS = 3_600_000;

/**
 * The policies in force, with the prefix lookup built once. Longest prefix wins; equal prefixes
 * cannot occur (the file is refused).
 */
export class NamespaceSet {
  private readonly byName: ReadonlyMap<string, NamespacePolicy>;
  /** Prefixes longest first, so the first match is the longest. */
  private readonly prefixes: readonly (readonly [string, NamespacePolicy])[];
  private readonly fallback: NamespacePolicy;
  private readonly cache = new Map<string, NamespacePolicy>();

  constructor(readonly policies: NamespacePolicies) {
    this.byName = new Map(policies.namespaces.map((n) => [n.name, n]));
    const fallback = this.byName.get(policies.defaultNamespace);
    if (!fallback) throw new Error(`default namespace ${policies.defaultNamespace} is not among the namespaces`);
    this.fallback = fallback;
    this.prefixes = policies.namespaces.flatMap((n) => n.prefixes.map((p) => [p, n] as const)).sort(([a], [b]) => b.length - a.length);
  }

  get all(): readonly NamespacePolicy[] {
    return this.policies.namespaces;
  }

  get(name: string): NamespacePolicy | undefined {
    return this.byName.get(name);
  }

  /** The namespace of a metric: its longest matching prefix's, else the default one. */
  resolve(metric: string): NamespacePolicy {
    let hit = this.cache.get(metric);
    if (hit) return hit;
    hit = this.fallback;
    for (const [p, n] of this.prefixes)
      if (metric.startsWith(p)) {
        hit = n;
        break;
      }
    // Metric names repeat endlessly; a bounded memo keeps the prefix walk off the write path.
    if (this.cache.size >= 100_000) this.cache.clear();
    this.cache.set(metric, hit);
    return hit;
  }
}

/**
 * Days after which S3 lifecycle rules may expire each kind of object of a namespace, as a
 * backstop behind the engine's retention: never before the engine has dropped an object from its
 * catalog and waited out its delete grace. Lifecycle ages count from an object's last write,
 * which is never before the start of the data it holds, so `retention + 1 day (a catalog or day
 * rollup covers a whole day) + grace`, rounded up to whole days, can never run ahead of the
 * engine. undefined: the kind is kept forever.
 */
export function lifecycleDays(policy: NamespacePolicy, deleteGraceMs: number): { seg?: number; cat?: number; rollup?: number } {
  const days = (ms: number | null) => (ms === null ? undefined : Math.ceil((ms + DAY_MS + deleteGraceMs) / DAY_MS));
  const raw = days(policy.rawRetentionMs);
  // One rollup folder holds every resolution: the longest-kept one decides.
  const rollupMs = policy.rollups.length === 0 ? policy.rawRetentionMs : policy.rollups.some((r) => r.retentionMs === null) ? null : Math.max(...policy.rollups.map((r) => r.retentionMs!));
  const out: { seg?: number; cat?: number; rollup?: number } = {};
  if (raw !== undefined) {
    out.seg = raw;
    // Catalogs list segment parts: they may go no earlier than the parts they name.
    out.cat = raw;
  }
  const rollup = days(rollupMs);
  if (rollup !== undefined) out.rollup = rollup;
  return out;
}
