/**
 * The pending deletes of a shard (docs/format/catalog.md, "Pending deletes"): segment parts the
 * compactor took out of a catalog, or uploaded for a fold that may not have committed, with the
 * time after which they may be deleted. A small JSON document
 * `{"version":1,"pending":[{"key":"…","deleteAfter":<ms>|null}, …]}`, sorted by key.
 */
export const PENDING_DELETES_VERSION = 1;

export interface PendingDelete {
  readonly key: string;
  /**
   * When the object may be deleted (ms since epoch), if the catalog no longer names it then; null
   * while the fold that wrote the entry may not have committed and been announced to readers.
   */
  readonly deleteAfter: number | null;
}

/** Sorted by key, one entry per key: equal lists encode to equal bytes. */
export function encodePendingDeletes(pending: readonly PendingDelete[]): Uint8Array {
  const sorted = [...pending].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.key === sorted[i - 1]!.key) throw new RangeError(`pending deletes list ${sorted[i]!.key} twice`);
  return Buffer.from(JSON.stringify({ version: PENDING_DELETES_VERSION, pending: sorted.map((p) => ({ key: p.key, deleteAfter: p.deleteAfter })) }));
}

export function decodePendingDeletes(bytes: Uint8Array): PendingDelete[] {
  const doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  if (typeof doc !== 'object' || doc === null || !('version' in doc) || !('pending' in doc)) throw new Error('pending deletes: not a {version, pending} document');
  if (doc.version !== PENDING_DELETES_VERSION) throw new Error(`pending deletes has unknown version ${String(doc.version)}`);
  if (!Array.isArray(doc.pending)) throw new Error('pending deletes: "pending" is not an array');
  return doc.pending.map((p: unknown, i): PendingDelete => {
    if (typeof p !== 'object' || p === null || !('key' in p) || !('deleteAfter' in p) || typeof p.key !== 'string' || p.key === '') {
      throw new Error(`pending deletes: entry ${i} is not a {key, deleteAfter} object`);
    }
    const after = p.deleteAfter;
    if (after !== null && !Number.isSafeInteger(after)) throw new Error(`pending deletes: entry ${i} has deleteAfter ${JSON.stringify(after)}, not null or a safe integer`);
    return { key: p.key, deleteAfter: after as number | null };
  });
}
