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
    return touch(this.entries, key);
  }

  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget) return;
    this.used -= remove(this.entries, key);
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

/**
 * A byte-bounded LRU that a scan larger than itself does not wipe out: when a new entry needs
 * room, it is admitted only if it was asked for more often, recently, than each entry it would
 * evict (TinyLFU admission; Einziger, Friedman and Manes, 2017). A bulk read that touches more
 * decoded blocks than the budget holds (all machines × 10 minutes of records) then keeps most of
 * them between repeats, where plain LRU evicts every block just before it is asked for again.
 * Frequencies count lookups (hits and misses) and are halved every `sampleFactor` × entries
 * lookups, so a new working set displaces an old one after a few rounds.
 */
export class FrequencyAdmissionCache<V> implements ObjectCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private readonly freq = new Map<string, number>();
  private used = 0;
  private lookups = 0;

  /**
   * `reserved`: bytes of the budget another cache holds now (a budget shared with it, see
   * QueryEngine); this cache uses what is left. The other cache calls trim() when it grows.
   */
  constructor(
    private readonly total: number,
    private readonly sampleFactor = 10,
    private readonly reserved: () => number = () => 0,
  ) {}

  private get budget(): number {
    return this.total - this.reserved();
  }

  /** Evicts the least recently used entries until the entries fit the budget left to this cache. */
  trim(): void {
    for (const [k] of this.entries) {
      if (this.used <= this.budget) break;
      this.evict(k);
    }
  }

  get(key: string): V | undefined {
    this.count(key);
    return touch(this.entries, key);
  }

  set(key: string, value: V, bytes: number): void {
    if (bytes > this.budget) return;
    if (this.entries.has(key)) this.evict(key);
    // Admitted only if the newcomer outranks every entry it would evict.
    const victims = this.victims(bytes - (this.budget - this.used), key, this.freq.get(key) ?? 0);
    if (!victims) return;
    for (const k of victims) this.evict(k);
    this.entries.set(key, { value, bytes });
    this.used += bytes;
    if (typeof value === 'object' && value !== null) owners.set(value, { cache: this, key });
  }

  /** Adds `bytes` to the entry of `key` (a memo derived from its value), evicting others to stay within the budget. */
  charge(key: string, bytes: number): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.bytes += bytes;
    this.used += bytes;
    for (const k of this.victims(this.used - this.budget, key)!) this.evict(k);
  }

  /**
   * The least recently used entries but `keep` whose bytes make `need` bytes of room; null when one
   * of them was asked for at least `outranks` times (the newcomer is then not admitted).
   */
  private victims(need: number, keep: string, outranks = Number.POSITIVE_INFINITY): string[] | null {
    const out: string[] = [];
    for (const [k, e] of this.entries) {
      if (need <= 0) break;
      if (k === keep) continue;
      if ((this.freq.get(k) ?? 0) >= outranks) return null;
      out.push(k);
      need -= e.bytes;
    }
    return out;
  }

  get bytes(): number {
    return this.used;
  }

  private evict(key: string): void {
    const e = this.entries.get(key)!;
    this.used -= e.bytes;
    this.entries.delete(key);
    if (owners.get(e.value as object)?.cache === this) owners.delete(e.value as object);
  }

  private count(key: string): void {
    this.freq.set(key, (this.freq.get(key) ?? 0) + 1);
    if (++this.lookups < this.sampleFactor * Math.max(64, this.entries.size)) return;
    // Ageing: halve every count (forgetting the keys that fall to zero), so old popularity fades.
    this.lookups = 0;
    for (const [k, n] of this.freq) {
      if (n > 1) this.freq.set(k, n >> 1);
      else this.freq.delete(k);
    }
  }
}

/**
 * The cache entry holding each cached object value, so that a memo derived from a cached value
 * (the compact wire form of a decoded block's columns, apps/api output/columns-wire.ts) is counted
 * in that cache's budget: without it the memos sat beside the cache, outside its budget (issue 11:
 * tens of MB at the R4 peak). A memo must be dropped with the value it derives from (a WeakMap
 * keyed by the value or by buffers it owns), so that evicting the entry frees both.
 */
const owners = new WeakMap<object, { cache: { charge(key: string, bytes: number): void }; key: string }>();

/**
 * Counts `bytes` of a memo derived from `value` in the budget of the cache that holds it, evicting
 * other entries if need be. Nothing happens when `value` is not cached (the memo then lives only as
 * long as the caller keeps the value). Returns whether it was counted.
 */
export function chargeMemo(value: object, bytes: number): boolean {
  const o = owners.get(value);
  if (!o) return false;
  o.cache.charge(o.key, bytes);
  return true;
}

/** The entry's value, moved to the most recently used end (a Map iterates in insertion order). */
function touch<V>(entries: Map<string, { value: V; bytes: number }>, key: string): V | undefined {
  const e = entries.get(key);
  if (!e) return undefined;
  entries.delete(key);
  entries.set(key, e);
  return e.value;
}

/** Removes the entry if present; its bytes (0 when absent). */
function remove(entries: Map<string, { bytes: number }>, key: string): number {
  const old = entries.get(key);
  if (!old) return 0;
  entries.delete(key);
  return old.bytes;
}
