import { createHash } from 'node:crypto';

/** A JSON value nested inside a field (arrays, objects). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * One field of a sample. `null` means "absent": a missing field and an explicit null are the same
 * thing to every reader.
 */
export type FieldValue = JsonValue;

export type Tags = Readonly<Record<string, string>>;

/** A series is a metric name plus its tags; the tags are part of its identity. */
export interface SeriesKey {
  readonly metric: string;
  readonly tags: Tags;
}

export interface Sample extends SeriesKey {
  /** Integer milliseconds since the Unix epoch. */
  readonly ts: number;
  readonly fields: Readonly<Record<string, FieldValue>>;
}

/**
 * Samples of one series as columns: `ts` ascending and unique, every field column as long as
 * `ts`, `null` where the sample had no such field.
 */
export interface SeriesColumns {
  ts: number[];
  fields: Record<string, FieldValue[]>;
}

export interface SeriesData extends SeriesKey, SeriesColumns {
  readonly id: string;
}

/**
 * An object keyed by user-supplied names (fields, tags, groups), without a prototype, so that
 * `constructor`, `toString` or `valueOf` are names like any other rather than inherited
 * functions. Every such map S4 builds starts here. (`__proto__` is refused by the validator:
 * JSON parsers and msgpackr treat it specially, so it could not round-trip.)
 */
export function nameMap<T>(entries?: Iterable<readonly [string, T]>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  if (entries) for (const [k, v] of entries) out[k] = v;
  return out;
}

/** `map[name]` when the map has it as its own property; never an inherited `constructor` or `toString`. */
export function own<T>(map: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(map, name) ? map[name] : undefined;
}

/** Tags sorted by key; the canonical form two equal series always share. */
export function sortedTags(tags: Tags): [string, string][] {
  return Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `metric{k1="v1",k2="v2"}`, keys sorted, values JSON-quoted so no tag value can forge another. */
export function canonicalSeries(key: SeriesKey): string {
  const tags = sortedTags(key.tags);
  if (tags.length === 0) return key.metric;
  return `${key.metric}{${tags.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}

/** Stable 64-bit series id as 16 hex digits: the first 8 bytes of SHA-256 of the canonical form. */
export function seriesId(key: SeriesKey): string {
  return createHash('sha256').update(canonicalSeries(key)).digest('hex').slice(0, 16);
}

/** True when every selector tag is present on the series with the same value. */
export function tagsMatch(series: Tags, selector: Tags): boolean {
  for (const [k, v] of Object.entries(selector)) if (own(series, k) !== v) return false;
  return true;
}
