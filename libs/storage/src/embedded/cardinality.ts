import { MINUTE_MS, type AdmitLimits, type AdmitResult, type CardinalityStore, type MetricUsage, type SeriesRef } from '@s4/core';

const HOUR_MS = 3_600_000;

interface Namespace {
  /** Series id → last written (ms). */
  readonly series: Map<string, { metric: string; at: number }>;
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

  private ns(name: string): Namespace {
    let n = this.namespaces.get(name);
    if (!n) this.namespaces.set(name, (n = { series: new Map(), fresh: new Map(), minutes: new Map(), hours: new Map(), requests: new Map() }));
    return n;
  }

  admit(name: string, series: readonly SeriesRef[], limits: AdmitLimits, now: number): Promise<AdmitResult> {
    const n = this.ns(name);
    for (const [id, s] of n.series) if (s.at <= now - limits.activeMs) n.series.delete(id);
    const minute = Math.floor(now / MINUTE_MS);
    for (const m of n.fresh.keys()) if (m < minute) n.fresh.delete(m);
    const freshNow = n.fresh.get(minute) ?? 0;
    let fresh = 0;
    for (const s of series) {
      if (n.series.has(s.id)) continue;
      if (limits.maxActiveSeries !== undefined && n.series.size + fresh >= limits.maxActiveSeries)
        return Promise.resolve({ admitted: false, limit: 'maxActiveSeries', max: limits.maxActiveSeries, metric: s.metric });
      if (limits.maxNewSeriesPerMinute !== undefined && freshNow + fresh >= limits.maxNewSeriesPerMinute)
        return Promise.resolve({ admitted: false, limit: 'maxNewSeriesPerMinute', max: limits.maxNewSeriesPerMinute, metric: s.metric });
      fresh++;
    }
    for (const s of series) n.series.set(s.id, { metric: s.metric, at: now });
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
    for (const s of n.series.values()) if (s.at > now - activeMs) of(s.metric).activeSeries++;
    const minute = Math.floor(now / MINUTE_MS);
    const hour = Math.floor(now / HOUR_MS);
    for (const [m, b] of n.minutes) if (m > minute - 60 && m <= minute) for (const [metric, c] of b) of(metric).samplesHour += c;
    for (const [h, b] of n.hours) if (h > hour - 24 && h <= hour) for (const [metric, c] of b) of(metric).samplesDay += c;
    return Promise.resolve([...out].map(([metric, u]) => ({ metric, ...u })));
  }
}
