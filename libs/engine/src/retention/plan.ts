import { DAY_MS, WINDOW_MS, isDayRollupKey, type NamespacePolicy } from '@s4/core';
import type { CatalogEntry } from '@s4/format';

/** What a catalog entry is, for retention: a raw segment part, an hourly rollup or a day rollup. */
export type RetainedKind = 'segment' | 'hour-rollup' | 'day-rollup';

/**
 * How long each kind is kept under a policy (null: forever). Hourly rollup objects hold the 1 m
 * and 1 h buckets, day objects the 1 h buckets of a whole day (rollup.md): hourly objects follow
 * the 1 m retention when 1 m is stored, else the 1 h one; day objects the 1 h retention when 1 h
 * is stored, else the 1 m one. A namespace with rollups off keeps what rollups it has for as long
 * as its raw data.
 */
export function retentionOf(policy: NamespacePolicy, kind: RetainedKind): number | null {
  if (kind === 'segment') return policy.rawRetentionMs;
  const of = (r: string) => policy.rollups.find((x) => x.resolution === r);
  const first = kind === 'hour-rollup' ? (of('1m') ?? of('1h')) : (of('1h') ?? of('1m'));
  return first === undefined ? policy.rawRetentionMs : first.retentionMs;
}

/** The span of time an entry holds: a day object its whole day, any other its hour window. */
export function spanEnd(entry: CatalogEntry, kind: RetainedKind): number {
  return entry.window + (kind === 'day-rollup' ? DAY_MS : WINDOW_MS);
}

export function kindOf(entry: CatalogEntry, catalog: 'segment' | 'rollup'): RetainedKind {
  return catalog === 'segment' ? 'segment' : isDayRollupKey(entry.key) ? 'day-rollup' : 'hour-rollup';
}

/** Whether the entry's whole span ended at least its retention before `now`. */
export function isExpired(entry: CatalogEntry, kind: RetainedKind, policy: NamespacePolicy, now: number): boolean {
  const keep = retentionOf(policy, kind);
  return keep !== null && spanEnd(entry, kind) <= now - keep;
}

/**
 * The entries of one day's catalog that retention takes out, and whether the catalog itself then
 * goes (nothing left and the whole day past the longest retention any of its kinds may have, so
 * that no later write can still belong in it).
 */
export function planDay(entries: readonly CatalogEntry[], catalog: 'segment' | 'rollup', day: number, policy: NamespacePolicy, now: number): { expired: CatalogEntry[]; dropCatalog: boolean } {
  const expired = entries.filter((e) => isExpired(e, kindOf(e, catalog), policy, now));
  const kinds: RetainedKind[] = catalog === 'segment' ? ['segment'] : ['hour-rollup', 'day-rollup'];
  const keeps = kinds.map((k) => retentionOf(policy, k));
  const longest = keeps.some((k) => k === null) ? null : Math.max(...(keeps as number[]));
  const dropCatalog = expired.length === entries.length && longest !== null && day + DAY_MS <= now - longest;
  return { expired, dropCatalog };
}
