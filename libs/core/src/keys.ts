/**
 * Every object-store name S4 writes, in one place. The grammar is specified in
 * libs/format/docs/format/keys.md. No key is ever the "folder" of another key, because
 * filesystem-backed S3 servers cannot hold both `a/b` and `a/b/c`.
 */
import { createHash } from 'node:crypto';
import { DAY_MS } from './time.js';

export const KEY_VERSION = 'v1';

/** Written once at first start: the shard count and format a store was created with. */
export const MANIFEST_KEY = `${KEY_VERSION}/manifest.json`;

/**
 * The folders of a namespace, one per kind of object: segment parts, their catalogs and day
 * lists, and everything the aggregation worker writes (rollup objects, their catalogs and day
 * lists). Retention and access rules (infra) are per folder.
 */
export const KEY_FOLDERS = { segments: 'seg', catalogs: 'cat', rollups: 'rollup' } as const;
export type KeyFolder = (typeof KEY_FOLDERS)[keyof typeof KEY_FOLDERS];

/** `v1/<ns>/`: every object of a namespace. */
export function namespacePrefix(ns: string): string {
  return `${KEY_VERSION}/${ns}/`;
}

/**
 * The shard count a namespace of the policy file was created with (the process's own namespace
 * is recorded in MANIFEST_KEY instead). A sibling of the namespace's folders.
 */
export function namespaceManifestKey(ns: string): string {
  return `${namespacePrefix(ns)}manifest.json`;
}

/**
 * The namespace's tombstones (series deleted over a time range, honoured by every query until
 * removed): one small JSON document, changed by compare-and-swap. A sibling of its folders.
 */
export function tombstonesKey(ns: string): string {
  return `${namespacePrefix(ns)}tombstones.json`;
}

/** `v1/<ns>/<folder>/`: every object of one kind in a namespace. */
export function folderPrefix(ns: string, folder: KeyFolder): string {
  return `${namespacePrefix(ns)}${folder}/`;
}

export interface ShardRef {
  readonly ns: string;
  readonly shard: number;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** `20261122T04Z` for the hour window starting at `window`. */
export function hourName(window: number): string {
  const d = new Date(window);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}Z`;
}

/** `20261122` for the UTC day containing `ts`. */
export function dayName(ts: number): string {
  const d = new Date(Math.floor(ts / DAY_MS) * DAY_MS);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}`;
}

export function shardName(shard: number): string {
  return pad(shard, 4);
}

/** Prefix under which every segment object of one shard lives. */
export function segmentShardPrefix(ref: ShardRef): string {
  return `${folderPrefix(ref.ns, KEY_FOLDERS.segments)}${shardName(ref.shard)}/`;
}

/**
 * One segment part. The fence token is in the name so that a stale owner, whose lease was taken
 * over, can never overwrite a part the new owner registered.
 */
export function segmentKey(ref: ShardRef, window: number, part: number, fence: number): string {
  return `${segmentShardPrefix(ref)}${hourName(window)}/p${pad(part, 6)}-f${pad(fence, 10)}.s4seg`;
}

/**
 * A day object: the compactor's fold of every part of one closed shard-day into one object
 * (keys.md, "Day fold"). The catalog lists it once per hour window it holds, each entry read
 * clipped to its window, so every reader keeps working per window.
 */
export function daySegmentKey(ref: ShardRef, day: number, part: number, fence: number): string {
  return `${segmentShardPrefix(ref)}${dayName(day)}/d${pad(part, 6)}-f${pad(fence, 10)}.s4seg`;
}

const DAY_SEGMENT_RE = /\/seg\/\d{4}\/\d{8}\/d\d{6}-f\d{10}\.s4seg$/;

/** Whether a segment key names a day object (`daySegmentKey`) rather than an hour part. */
export function isDaySegmentKey(key: string): boolean {
  return DAY_SEGMENT_RE.test(key);
}

/**
 * Catalogs exist for two kinds of object: raw segment parts (`cat/`) and rollups (inside the
 * rollup prefix, so that one prefix holds everything the aggregation worker writes).
 */
export type CatalogKind = 'segment' | 'rollup';

const catalogFolder = (ref: ShardRef, kind: CatalogKind) =>
  `${kind === 'segment' ? folderPrefix(ref.ns, KEY_FOLDERS.catalogs) : `${folderPrefix(ref.ns, KEY_FOLDERS.rollups)}cat/`}${shardName(ref.shard)}`;

const rollupObjects = (ref: ShardRef) => `${folderPrefix(ref.ns, KEY_FOLDERS.rollups)}obj/${shardName(ref.shard)}/`;

/** The catalog of one shard for one UTC day: which objects hold which windows. */
export function catalogKey(ref: ShardRef, day: number, kind: CatalogKind = 'segment'): string {
  return `${catalogFolder(ref, kind)}/${dayName(day)}.s4cat`;
}

/**
 * The rollup of one hour window, computed from exactly the segment parts whose keys hash to
 * `source`: a reader that sees other parts registered knows the rollup is stale.
 */
export function rollupKey(ref: ShardRef, window: number, source: string): string {
  return `${rollupObjects(ref)}${hourName(window)}/r-${source}.s4rol`;
}

/**
 * The list of days for which a shard has a catalog, so a query over a long range reads only
 * catalogs that exist. A sibling of the shard's catalog folder, never inside it.
 */
export function catalogDaysKey(ref: ShardRef, kind: CatalogKind = 'segment'): string {
  return `${catalogFolder(ref, kind)}.days`;
}

/**
 * The series index of one shard-day (series-index.md): the postings of every series of the
 * parts it covers and where their blocks are. Beside the day's catalog; derived data, rebuilt
 * from the parts' footers when missing.
 */
export function seriesIndexKey(ref: ShardRef, day: number): string {
  return `${catalogFolder(ref, 'segment')}/${dayName(day)}.s4idx`;
}

/**
 * The segment parts of a shard that left its catalogs (folded by the compactor) or were uploaded
 * by a fold that never committed, waiting to be deleted once no reader can still be using them
 * (catalog.md, "Pending deletes"); for `rollup`, the rollup objects a newer one replaced. A
 * sibling of the shard's catalog folder, like its day list.
 */
export function pendingDeletesKey(ref: ShardRef, kind: CatalogKind = 'segment'): string {
  return `${catalogFolder(ref, kind)}.deletes`;
}

/**
 * The 1-hour buckets of a whole UTC day of one shard, folded from that day's hourly rollups
 * (whose keys hash to `source`), so that long ranges read one object per shard-day.
 */
export function dayRollupKey(ref: ShardRef, day: number, source: string): string {
  return `${rollupObjects(ref)}${dayName(day)}/d-${source}.s4rol`;
}

/**
 * The `source` of a rollup key: the first 16 hex digits of SHA-256 over the sorted keys joined by
 * `\n`, identifying an exact set of objects (the parts a rollup was computed from, or the hourly
 * rollups of a day) whatever order they are listed in.
 */
export function keySetHash(keys: readonly string[]): string {
  const joined = [...keys].sort().join('\n');
  let hash = hashes.get(joined);
  if (hash === undefined) {
    hash = createHash('sha256').update(joined).digest('hex').slice(0, 16);
    // Every step query hashes each window it touches; the sets rarely change, so remember them.
    if (hashes.size >= 100_000) hashes.clear();
    hashes.set(joined, hash);
  }
  return hash;
}

const hashes = new Map<string, string>();

/** The hourly rollup that is current when these are the window's registered part keys. */
export function currentRollupKey(ref: ShardRef, window: number, partKeys: readonly string[]): string {
  return rollupKey(ref, window, keySetHash(partKeys));
}

/** The day rollup that is current when these are the day's current hourly rollup keys. */
export function currentDayRollupKey(ref: ShardRef, day: number, hourlyKeys: readonly string[]): string {
  return dayRollupKey(ref, day, keySetHash(hourlyKeys));
}

const DAY_ROLLUP_RE = /\/d-[0-9a-f]{16}\.s4rol$/;

/** Whether a rollup key names a day object (`dayRollupKey`) rather than an hour's (`rollupKey`). */
export function isDayRollupKey(key: string): boolean {
  return DAY_ROLLUP_RE.test(key);
}

const ROLLUP_DAY_RE = /\/rollup\/obj\/\d{4}\/(\d{8})(?:T\d{2}Z)?\/[rd]-[0-9a-f]{16}\.s4rol$/;

/** The UTC day start of a rollup key (hour or day object), or null when it is not one. */
export function rollupKeyDay(key: string): number | null {
  const m = ROLLUP_DAY_RE.exec(key);
  if (!m) return null;
  const d = m[1]!;
  return Date.UTC(+d.slice(0, 4), +d.slice(4, 6) - 1, +d.slice(6, 8));
}

const SEGMENT_RE = /^v1\/([^/]+)\/seg\/(\d{4})\/(\d{8})(?:T(\d{2})Z\/p|\/(d))(\d{6})-f(\d{10})\.s4seg$/;

export interface ParsedSegmentKey extends ShardRef {
  /** The hour window of a part; the day start of a day object. */
  window: number;
  part: number;
  fence: number;
  /** A day object (daySegmentKey). */
  day: boolean;
}

export function parseSegmentKey(key: string): ParsedSegmentKey | null {
  const m = SEGMENT_RE.exec(key);
  if (!m) return null;
  const [, ns, shard, date, hour, day, part, fence] = m as unknown as [string, string, string, string, string | undefined, string | undefined, string, string];
  const window = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), day ? 0 : +hour!);
  return { ns, shard: +shard, window, part: +part, fence: +fence, day: day !== undefined };
}
