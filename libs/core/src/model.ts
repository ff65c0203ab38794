import { hash } from 'node:crypto';

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
  // The one-shot hash as a binary (latin1) string, and the id made by fromCharCode: a new series cost
  // ~5-8 µs in a Hash object and a Buffer (1.5 M of them in a churned 1 M-series load). Not
  // `hash(…, 'hex').slice(0, 16)`: that is a view keeping the whole 64-digit string alive behind
  // every id held in memory (the hot tier and the write path keep one per series).
  const d = hash('sha256', canonicalSeries(key), 'binary');
  const a = d.charCodeAt(0), b = d.charCodeAt(1), c = d.charCodeAt(2), e = d.charCodeAt(3); // prettier-ignore
  const f = d.charCodeAt(4), g = d.charCodeAt(5), h = d.charCodeAt(6), i = d.charCodeAt(7); // prettier-ignore
  return String.fromCharCode(hex(a >> 4), hex(a & 15), hex(b >> 4), hex(b & 15), hex(c >> 4), hex(c & 15), hex(e >> 4), hex(e & 15), hex(f >> 4), hex(f & 15), hex(g >> 4), hex(g & 15), hex(h >> 4), hex(h & 15), hex(i >> 4), hex(i & 15));
}

/** The character code of a hex digit (0-15), lower case as `digest('hex')` writes it. */
const hex = (n: number): number => (n < 10 ? 48 + n : 87 + n);

const keyJsonOf = new WeakMap<SeriesKey, string>();

/**
 * The series key as the hot tiers and the ingest log record it: JSON `{"metric","tags"}`. Made
 * once per key object (the write path hands the same object for a series on every request).
 */
export function keyJson(key: SeriesKey): string {
  let text = keyJsonOf.get(key);
  if (text === undefined) keyJsonOf.set(key, (text = JSON.stringify({ metric: key.metric, tags: key.tags })));
  return text;
}

/** True when every selector tag is present on the series with the same value. */
export function tagsMatch(series: Tags, selector: Tags): boolean {
  // One selector is tested against every series of a scan (75,000 per query at 1 M series): its pairs are listed once.
  let pairs = selectorPairs.get(selector);
  if (!pairs) selectorPairs.set(selector, (pairs = Object.entries(selector)));
  for (let i = 0; i < pairs.length; i++) if (own(series, pairs[i]![0]) !== pairs[i]![1]) return false;
  return true;
}
const selectorPairs = new WeakMap<Tags, readonly (readonly [string, string])[]>();

/** A series as written, with what every write needs of it computed once: its id and the sizes the tag limits check. */
export interface SeriesIdentity {
  readonly key: SeriesKey;
  readonly id: string;
  readonly tagCount: number;
  readonly longestTagValue: number;
}

/** Distinct strings interned so far (internName), by themselves. */
const names = new Map<string, string>();
/** Past this many distinct strings, new ones are kept as they come: unique values (ids, random tags) would only fill the pool. */
const INTERNED_MAX = 262_144;

/**
 * One string for every equal metric name, tag key or tag value held per series: at a million
 * series of 20 metrics × 50,000 hosts, each series' key parsed from its request held its own
 * copies (~70 bytes a series). Process-wide, so the write path's key objects and the hot tier's
 * series share them (the embedded hot tier keeps a key whose strings are all interned as it is).
 */
export function internName(v: string): string {
  const known = names.get(v);
  if (known !== undefined) return known;
  if (names.size < INTERNED_MAX) names.set(v, v);
  return v;
}

/** Whether the key's metric and tag values are the interned strings (or strings the full pool let be): a key to keep as it is. */
export function isInterned(key: SeriesKey): boolean {
  if (internName(key.metric) !== key.metric) return false;
  for (const k in key.tags) {
    const v = key.tags[k]!;
    if (internName(v) !== v) return false;
  }
  return true;
}

/** The identity of a checked series key, made anew (SeriesIdentities caches them). */
export function newIdentity(metric: string, tags: Tags): SeriesIdentity {
  const key: SeriesKey = { metric, tags };
  let tagCount = 0;
  let longestTagValue = 0;
  for (const k in tags) {
    tagCount++;
    longestTagValue = Math.max(longestTagValue, tags[k]!.length);
  }
  return { key, id: seriesId(key), tagCount, longestTagValue };
}

/**
 * Series identities by metric and tags as they arrive (tag order included), so that a series
 * written every scrape pays for sorting its tags and hashing its canonical form once, not per
 * request: at 40,000 series a request, that hashing was a sixth of ingest. Bounded: two
 * generations of `perGeneration` entries; when the newer fills it becomes the older and the
 * oldest is dropped, so series still written survive (a hit in the older moves up).
 * About 360 bytes an entry with a 2-tag key (measured: raw key, identity, key object, tags and
 * their strings), so at most 2 × 65,536 entries cost ≤ ~50 MB; a working set of up to
 * `perGeneration` series (65,536 unless S4_SERIES_CACHE_ENTRIES says otherwise, see `resize`)
 * always hits. (Bodies the write path scans from their bytes have their own cache, scan.ts, and
 * do not come here.)
 */
export class SeriesIdentities {
  private current = new Map<string, SeriesIdentity>();
  private older = new Map<string, SeriesIdentity>();

  constructor(private perGeneration = 65_536) {}

  /** A generation of `perGeneration` entries from now on (the process's setting, applied at start). */
  resize(perGeneration: number): void {
    this.perGeneration = perGeneration;
  }

  of(metric: string, tags: Tags): SeriesIdentity {
    // Tag keys and metric names hold no control characters (the validator refuses them) but tag
    // values may: each value is length-prefixed, so no two different tag sets share a raw key.
    let raw = metric;
    for (const k in tags) {
      const v = tags[k]!;
      raw += `\u0000${k}\u0000${v.length}\u0000${v}`;
    }
    let hit = this.current.get(raw);
    if (hit) return hit;
    hit = this.older.get(raw) ?? newIdentity(metric, tags);
    if (this.current.size >= this.perGeneration) {
      this.older = this.current;
      this.current = new Map();
    }
    this.current.set(raw, hit);
    return hit;
  }
}
