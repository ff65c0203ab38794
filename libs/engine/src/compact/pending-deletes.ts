import { PreconditionFailedError, pendingDeletesKey, type CatalogKind, type ObjectStore, type ShardRef } from '@s4/core';
import { decodePendingDeletes, encodePendingDeletes, type PendingDelete } from '@s4/format';

/**
 * The pending deletes of each shard (catalog.md, "Pending deletes"), read and changed only with
 * compare-and-swap on the object's ETag, so that a deposed compactor can never erase what the
 * current one wrote.
 */
export class PendingDeletesStore {
  /** The copy last seen per shard, revalidated with a conditional GET (a 304 when unchanged). */
  private readonly seen = new Map<string, { list: PendingDelete[]; etag: string }>();

  constructor(
    private readonly objects: ObjectStore,
    /** Whose list: the compactor's (segment parts) or the rollup builder's (rollup objects). */
    private readonly kind: CatalogKind = 'segment',
  ) {}

  async read(ref: ShardRef): Promise<PendingDelete[]> {
    const key = pendingDeletesKey(ref, this.kind);
    const cached = this.seen.get(key);
    const got = await this.objects.get(key, cached ? { ifNoneMatch: cached.etag } : undefined);
    if (got === null) {
      this.seen.delete(key);
      return [];
    }
    if (got.notModified) return cached!.list;
    const list = decodePendingDeletes(got.body);
    this.seen.set(key, { list, etag: got.etag });
    return list;
  }

  /**
   * Compare-and-swap: `change` gets the current list and returns the next one (null: no change);
   * on a conflict it runs again on the newer list.
   */
  async update(ref: ShardRef, change: (current: readonly PendingDelete[]) => PendingDelete[] | null): Promise<void> {
    const key = pendingDeletesKey(ref, this.kind);
    for (let attempt = 0; ; attempt++) {
      const got = await this.objects.get(key);
      const current = got && !got.notModified ? decodePendingDeletes(got.body) : [];
      const next = change(current);
      if (next === null) return;
      try {
        const put = await this.objects.put(key, encodePendingDeletes(next), got && !got.notModified ? { ifMatch: got.etag } : { ifNoneMatch: '*' });
        this.seen.set(key, { list: next, etag: put.etag });
        return;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 10) throw e;
      }
    }
  }
}

/** `list` with each of `keys` set to `deleteAfter` (added when absent). */
export function upsert(list: readonly PendingDelete[], keys: Iterable<string>, deleteAfter: number | null): PendingDelete[] {
  const byKey = new Map(list.map((p) => [p.key, p]));
  for (const key of keys) byKey.set(key, { key, deleteAfter });
  return [...byKey.values()];
}
