import type { FieldValue } from '@s4/core';

type Row = Record<string, FieldValue>;

/**
 * What a store must return: per series, per timestamp, the last acknowledged write. Tests feed
 * it every write the server acknowledged and compare query answers with `expected()`.
 */
export class ExpectedStore {
  private readonly series = new Map<string, { metric: string; tags: Record<string, string>; points: Map<number, Row> }>();

  static key(metric: string, tags: Record<string, string>): string {
    return JSON.stringify([metric, Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : 1))]);
  }

  write(metric: string, tags: Record<string, string>, ts: number, fields: Row): void {
    const k = ExpectedStore.key(metric, tags);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { metric, tags, points: new Map() }));
    s.points.set(ts, fields);
  }

  /** Columns per series key, timestamps ascending, absent fields as null. */
  expected(): Map<string, { ts: number[]; fields: Record<string, FieldValue[]> }> {
    const out = new Map<string, { ts: number[]; fields: Record<string, FieldValue[]> }>();
    for (const [k, s] of this.series) {
      const ts = [...s.points.keys()].sort((a, b) => a - b);
      const names = new Set<string>();
      for (const r of s.points.values()) for (const f of Object.keys(r)) names.add(f);
      const fields: Record<string, FieldValue[]> = {};
      for (const f of [...names].sort()) fields[f] = ts.map((t) => s.points.get(t)![f] ?? null);
      out.set(k, { ts, fields });
    }
    return out;
  }

  get size(): number {
    let n = 0;
    for (const s of this.series.values()) n += s.points.size;
    return n;
  }
}

/** A small deterministic PRNG (mulberry32), so failing runs can be replayed by seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
