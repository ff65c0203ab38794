import { CorruptDataError } from '@s4/core';
import { ByteWriter } from '../codec/bytes.js';
import { decodeFrame, encodeFrame } from '../codec/frame.js';
import { msgpack } from '../msgpack.js';
import { asCorrupt } from '../segment/block.js';

/** One registered segment part. */
export interface CatalogEntry {
  window: number;
  part: number;
  /** Fencing token of the lease under which the part was written; also in its key. */
  fence: number;
  key: string;
  /** Object size in bytes. */
  size: number;
  footerOffset: number;
  footerLength: number;
  series: number;
  samples: number;
  minTs: number;
  maxTs: number;
  /** Distinct metric names in the part; null when there are more than MAX_CATALOG_METRICS. */
  metrics: string[] | null;
  /** Milliseconds since the epoch when the part was registered. */
  createdAt: number;
}

/** Which segment parts exist, per window, for one (namespace, shard, UTC day). */
export interface Catalog {
  ns: string;
  shard: number;
  day: number;
  entries: CatalogEntry[];
}

export const CATALOG_VERSION = 1;
export const MAX_CATALOG_METRICS = 256;
/** "S4CT". */
export const CATALOG_MAGIC = new Uint8Array([0x53, 0x34, 0x43, 0x54]);
const WHAT = 'catalog';

// Order of an entry's positional MessagePack array; the spec (catalog.md) lists the same order.
const INT_FIELDS = ['window', 'part', 'fence', 'size', 'footerOffset', 'footerLength', 'series', 'samples', 'minTs', 'maxTs', 'createdAt'] as const;

/**
 * "S4CT" | version u8 | 3 zero bytes | frame(MessagePack [ns, shard, day, [entry…]]).
 * Entries are written sorted by (window, part) so that equal catalogs have equal bytes.
 */
export function encodeCatalog(c: Catalog): Uint8Array {
  const entries = [...c.entries].sort((a, b) => a.window - b.window || a.part - b.part);
  // Checked on write: a catalog the decoder would reject must never reach the object store.
  if (!isInt(c.shard) || !isInt(c.day)) throw new RangeError('catalog shard and day must be safe integers');
  for (const e of entries) {
    for (const f of INT_FIELDS) {
      const v: unknown = e[f];
      if (!isInt(v)) throw new RangeError(`catalog entry ${e.key}: ${f}=${String(v)} is not a safe integer`);
    }
    if (e.metrics && e.metrics.length > MAX_CATALOG_METRICS) {
      throw new RangeError(`catalog entry ${e.key}: ${e.metrics.length} metrics; store null above ${MAX_CATALOG_METRICS}`);
    }
  }
  const rows = entries.map((e) => [...INT_FIELDS.map((f) => e[f]), e.key, e.metrics]);
  const w = new ByteWriter(256);
  w.bytes(CATALOG_MAGIC);
  w.u8(CATALOG_VERSION);
  w.bytes(new Uint8Array(3));
  w.bytes(encodeFrame(msgpack.pack([c.ns, c.shard, c.day, rows])));
  return w.finish();
}

export function decodeCatalog(b: Uint8Array): Catalog {
  if (b.length < 8) throw new CorruptDataError(WHAT, `${b.length} bytes is too short`);
  for (let i = 0; i < 4; i++) if (b[i] !== CATALOG_MAGIC[i]) throw new CorruptDataError(WHAT, 'magic "S4CT" missing');
  if (b[4] !== CATALOG_VERSION) throw new CorruptDataError(WHAT, `unsupported version ${b[4]}`);
  if (b[5] !== 0 || b[6] !== 0 || b[7] !== 0) throw new CorruptDataError(WHAT, 'reserved header bytes are not zero');
  const body = decodeFrame(b.subarray(8), WHAT);
  try {
    const root: unknown = msgpack.unpack(body);
    if (!Array.isArray(root) || root.length !== 4) throw bad('root is not [ns, shard, day, entries]');
    const [ns, shard, day, rows] = root as unknown[];
    if (typeof ns !== 'string' || !isInt(shard) || !isInt(day) || !Array.isArray(rows)) throw bad('bad root fields');
    return { ns, shard, day, entries: rows.map(decodeEntry) };
  } catch (err) {
    throw asCorrupt(WHAT, err);
  }
}

function decodeEntry(row: unknown, i: number): CatalogEntry {
  if (!Array.isArray(row) || row.length !== INT_FIELDS.length + 2) throw bad(`entry ${i} has the wrong shape`);
  const e = {} as Record<string, unknown>;
  INT_FIELDS.forEach((f, j) => {
    if (!isInt(row[j])) throw bad(`entry ${i}: ${f} is not an integer`);
    e[f] = row[j];
  });
  const key: unknown = row[INT_FIELDS.length];
  const metrics: unknown = row[INT_FIELDS.length + 1];
  if (typeof key !== 'string') throw bad(`entry ${i}: key is not a string`);
  if (metrics !== null && !(Array.isArray(metrics) && metrics.every((m) => typeof m === 'string'))) {
    throw bad(`entry ${i}: metrics is neither null nor a list of strings`);
  }
  return { ...(e as Omit<CatalogEntry, 'key' | 'metrics'>), key, metrics: metrics };
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const bad = (why: string) => new CorruptDataError(WHAT, why);
