import { KEY_VERSION, type GetOptions, type GetResult, type ObjectInfo, type ObjectStore, type PutCondition } from '@s4/core';

/** Object-store requests of one namespace, by the kind S3 bills them as. */
export interface RequestCount {
  /** PUT, COPY, POST, LIST (S3's "PUT, COPY, POST, LIST requests" price). */
  put: number;
  /** GET and every other request (HEAD) (S3's "GET, SELECT, and all other requests" price). */
  get: number;
}

/** A LIST answers at most this many keys per request (S3's page). */
const LIST_PAGE = 1000;

/** The namespace a key belongs to (`v1/<ns>/...`), or undefined for store-wide keys (the manifest). */
export function namespaceOfKey(key: string): string | undefined {
  if (!key.startsWith(`${KEY_VERSION}/`)) return undefined;
  const end = key.indexOf('/', KEY_VERSION.length + 1);
  return end < 0 ? undefined : key.slice(KEY_VERSION.length + 1, end);
}

/** Requests counted per namespace since the last `take`. */
export class RequestCounts {
  private counts = new Map<string, RequestCount>();

  add(ns: string | undefined, kind: keyof RequestCount, n = 1): void {
    if (ns === undefined) return;
    let c = this.counts.get(ns);
    if (!c) this.counts.set(ns, (c = { put: 0, get: 0 }));
    c[kind] += n;
  }

  addAll(entries: Iterable<readonly [string, RequestCount]>): void {
    for (const [ns, c] of entries) {
      this.add(ns, 'put', c.put);
      this.add(ns, 'get', c.get);
    }
  }

  /** The counts so far, and start over. */
  take(): [string, RequestCount][] {
    const out = [...this.counts];
    this.counts = new Map();
    return out;
  }
}

/**
 * An ObjectStore that counts every request per namespace (for the cost report), as S3 bills
 * them: a PUT or DELETE per call (DeleteObjects is one POST per 1,000 keys), a LIST per page, a
 * GET or HEAD per call (hedged reads may send a second GET that this does not see).
 */
export class CountingObjectStore implements ObjectStore {
  constructor(
    readonly inner: ObjectStore,
    private readonly counts: RequestCounts,
  ) {}

  put(key: string, body: Uint8Array, condition?: PutCondition): Promise<{ etag: string }> {
    this.counts.add(namespaceOfKey(key), 'put');
    return this.inner.put(key, body, condition);
  }

  get(key: string, options?: GetOptions): Promise<GetResult | null> {
    this.counts.add(namespaceOfKey(key), 'get');
    return this.inner.get(key, options);
  }

  head(key: string): Promise<{ size: number; etag: string } | null> {
    this.counts.add(namespaceOfKey(key), 'get');
    return this.inner.head(key);
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const ns = namespaceOfKey(prefix);
    this.counts.add(ns, 'put');
    let n = 0;
    for await (const o of this.inner.list(prefix)) {
      if (++n % LIST_PAGE === 0) this.counts.add(ns, 'put');
      yield o;
    }
  }

  delete(keys: readonly string[]): Promise<void> {
    const byNs = new Map<string | undefined, number>();
    for (const k of keys) byNs.set(namespaceOfKey(k), (byNs.get(namespaceOfKey(k)) ?? 0) + 1);
    for (const [ns, n] of byNs) this.counts.add(ns, 'put', Math.ceil(n / LIST_PAGE));
    return this.inner.delete(keys);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
