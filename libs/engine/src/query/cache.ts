/**
 * What the query engine needs of a cache: values derived from immutable objects (footers and
 * blocks), each with its approximate size, so that an implementation can bound them by bytes.
 * No invalidation is ever needed.
 */
export interface ObjectCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, bytes: number): void;
}

/** Least-recently-used cache bounded by bytes. */
export class ByteBudgetCache<V> implements ObjectCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private used = 0;

  constructor(private readonly budget: number) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget) return;
    const old = this.entries.get(key);
    if (old) {
      this.used -= old.bytes;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, bytes });
    this.used += bytes;
    for (const [k, e] of this.entries) {
      if (this.used <= this.budget) break;
      this.entries.delete(k);
      this.used -= e.bytes;
    }
  }

  get bytes(): number {
    return this.used;
  }
}
