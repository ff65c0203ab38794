import { MINUTE_MS, smallMs, type AdmitLimits, type AdmitResult, type CardinalityStore, type MetricUsage, type SeriesRef } from '@s4/core';

const HOUR_MS = 3_600_000;

/** An active series: its metric and when it was last written, ms after the store's `base` (a small integer, held in the object). */
interface Active {
  readonly metric: string;
  at: number;
}

interface Namespace {
  /** Series id → its entry, updated in place as the series is written again. */
  readonly series: Map<string, Active>;
  /** When expired series were last dropped from `series` (store time). */
  sweptAt: number;
  /** Minute → series first seen in it. */
  readonly fresh: Map<number, number>;
  /** Minute and hour → metric → samples. */
  readonly minutes: Map<number, Map<string, number>>;
  readonly hours: Map<number, Map<string, number>>;
  /** Hour → object-store requests. */
  readonly requests: Map<number, { put: number; get: number }>;
}

/**
 * The cardinality store of embedded mode: in memory, because the embedded hot tier makes one
 * process the whole store. Counts start over when the process restarts (series are active again
 * as soon as they are written); the Redis adapter keeps them in the server instead.
 */
export class MemoryCardinalityStore implements CardinalityStore {
  private readonly namespaces = new Map<string, Namespace>();
  /**
   * Times are kept as ms after this (the first call's time): a small integer fits in its entry, where
   * an epoch time is a heap number of its own, one per series per write.
   */
  private base: number | null = null;

  private since(now: number): number {
    this.base ??= now;
    return smallMs(now - this.base);
  }

  private ns(name: string): Namespace {
    let n = this.namespaces.get(name);
    if (!n) this.namespaces.set(name, (n = { series: new Map(), sweptAt: Number.NEGATIVE_INFINITY, fresh: new Map(), minutes: new Map(), hours: new Map(), requests: new Map() }));
    return n;
  }

  admit(name: string, series: readonly SeriesRef[], limits: AdmitLimits, now: number): Promise<AdmitResult> {
    const n = this.ns(name);
    const at = this.since(now);
    // Entries older than this are expired, whether or not a sweep has dropped them yet.
    const cutoff = at - limits.activeMs;
    // A walk over every active series (a million of them, per request of a scrape round) once a
    // minute or so, not per call; before a refusal, always, so the limit counts exactly.
    const sweep = () => {
      for (const [id, s] of n.series) if (s.at <= cutoff) n.series.delete(id);
      n.sweptAt = at;
    };
    if (at - n.sweptAt >= limits.activeMs / 60) sweep();
    const minute = Math.floor(now / MINUTE_MS);
    for (const m of n.fresh.keys()) if (m < minute) n.fresh.delete(m);
    const freshNow = n.fresh.get(minute) ?? 0;
    let fresh = 0;
    for (const s of series) {
      const known = n.series.get(s.id);
      if (known !== undefined && known.at > cutoff) continue;
      if (limits.maxActiveSeries !== undefined && n.series.size + fresh >= limits.maxActiveSeries) {
        if (n.sweptAt !== at) sweep();
        if (n.series.size + fresh >= limits.maxActiveSeries)
          return Promise.resolve({ admitted: false, limit: 'maxActiveSeries', max: limits.maxActiveSeries, metric: s.metric });
      }
      if (limits.maxNewSeriesPerMinute !== undefined && freshNow + fresh >= limits.maxNewSeriesPerMinute)
        return Promise.resolve({ admitted: false, limit: 'maxNewSeriesPerMinute', max: limits.maxNewSeriesPerMinute, metric: s.metric });
      fresh++;
    }
    for (const s of series) {
      const known = n.series.get(s.id);
      if (known !== undefined) known.at = at;
      else n.series.set(s.id, { metric: s.metric, at });
    }
    if (fresh > 0) n.fresh.set(minute, freshNow + fresh);
    return Promise.resolve({ admitted: true, fresh });
  }

  addSamples(name: string, counts: ReadonlyMap<string, number>, now: number): Promise<void> {
    const n = this.ns(name);
    const add = (buckets: Map<number, Map<string, number>>, at: number, keep: number) => {
      let b = buckets.get(at);
      if (!b) buckets.set(at, (b = new Map()));
      for (const [metric, c] of counts) b.set(metric, (b.get(metric) ?? 0) + c);
      for (const k of buckets.keys()) if (k <= at - keep) buckets.delete(k);
    };
    add(n.minutes, Math.floor(now / MINUTE_MS), 60);
    add(n.hours, Math.floor(now / HOUR_MS), 24);
    return Promise.resolve();
  }

  addRequests(name: string, put: number, get: number, now: number): Promise<void> {
    const n = this.ns(name);
    const hour = Math.floor(now / HOUR_MS);
    const r = n.requests.get(hour) ?? { put: 0, get: 0 };
    n.requests.set(hour, { put: r.put + put, get: r.get + get });
    for (const h of n.requests.keys()) if (h <= hour - 24) n.requests.delete(h);
    return Promise.resolve();
  }

  requests(name: string, now: number): Promise<{ put: number; get: number }> {
    const hour = Math.floor(now / HOUR_MS);
    const out = { put: 0, get: 0 };
    for (const [h, r] of this.ns(name).requests)
      if (h > hour - 24 && h <= hour) {
        out.put += r.put;
        out.get += r.get;
      }
    return Promise.resolve(out);
  }

  usage(name: string, activeMs: number, now: number): Promise<MetricUsage[]> {
    const n = this.ns(name);
    const out = new Map<string, { activeSeries: number; samplesHour: number; samplesDay: number }>();
    const of = (metric: string) => {
      let u = out.get(metric);
      if (!u) out.set(metric, (u = { activeSeries: 0, samplesHour: 0, samplesDay: 0 }));
      return u;
    };
    const cutoff = this.since(now) - activeMs;
    for (const s of n.series.values()) if (s.at > cutoff) of(s.metric).activeSeries++;
    const minute = Math.floor(now / MINUTE_MS);
    const hour = Math.floor(now / HOUR_MS);
    for (const [m, b] of n.minutes) if (m > minute - 60 && m <= minute) for (const [metric, c] of b) of(metric).samplesHour += c;
    for (const [h, b] of n.hours) if (h > hour - 24 && h <= hour) for (const [metric, c] of b) of(metric).samplesDay += c;
    return Promise.resolve([...out].map(([metric, u]) => ({ metric, ...u })));
  }
}
