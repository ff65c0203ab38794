import { MINUTE_MS, grown, smallMs, type AdmitLimits, type AdmitResult, type CardinalityStore, type MetricUsage, type SeriesRef } from '@s4/core';

const HOUR_MS = 3_600_000;

/**
 * A namespace's active series as rows: id → row in `rows`, and per row its metric (a number in
 * `metrics`) and when it was last written (ms after the store's `base`). An object per series
 * was one more object per active series for the HTTP thread's major GCs to mark (a million of
 * them at the cardinality bench's size; issue 12); a Map of small integers holds none.
 */
class ActiveSeries {
  private readonly rows = new Map<string, number>();
  private metric = new Int32Array(1024);
  private at = new Float64Array(1024);
  private readonly free: number[] = [];
  private used = 0;
  private readonly metricIds = new Map<string, number>();
  private readonly metricNames: string[] = [];
  /** Rows per metric number: a metric's number is let go with its last series (metric names may churn too). */
  private readonly metricRows: number[] = [];
  private readonly freeMetrics: number[] = [];

  get size(): number {
    return this.rows.size;
  }

  /** When `id` was last written, or undefined when it is not held. */
  atOf(id: string): number | undefined {
    const row = this.rows.get(id);
    return row === undefined ? undefined : this.at[row];
  }

  /** `id` (of `metric`) written at `at`. */
  touch(id: string, metric: string, at: number): void {
    const row = this.rows.get(id);
    if (row !== undefined) {
      this.at[row] = at;
      return;
    }
    let m = this.metricIds.get(metric);
    if (m === undefined) {
      m = this.freeMetrics.pop() ?? this.metricNames.length;
      this.metricIds.set(metric, m);
      this.metricNames[m] = metric;
      this.metricRows[m] = 0;
    }
    this.metricRows[m]!++;
    let r = this.free.pop();
    if (r === undefined) {
      r = this.used++;
      if (r >= this.at.length) {
        this.metric = grown(this.metric, 2 * this.at.length);
        this.at = grown(this.at, 2 * this.at.length);
      }
    }
    this.metric[r] = m;
    this.at[r] = at;
    this.rows.set(id, r);
  }

  /** Every series last written at or before `cutoff` let go. */
  expire(cutoff: number): void {
    for (const [id, row] of this.rows)
      if (this.at[row]! <= cutoff) {
        this.rows.delete(id);
        this.free.push(row);
        const m = this.metric[row]!;
        if (--this.metricRows[m]! === 0) {
          this.metricIds.delete(this.metricNames[m]!);
          this.metricNames[m] = '';
          this.freeMetrics.push(m);
        }
      }
  }

  /** Per metric, its series written after `cutoff`. */
  countAfter(cutoff: number, add: (metric: string) => void): void {
    for (const row of this.rows.values()) if (this.at[row]! > cutoff) add(this.metricNames[this.metric[row]!]!);
  }
}

interface Namespace {
  /** The active series, updated in place as a series is written again. */
  readonly series: ActiveSeries;
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
    if (!n) this.namespaces.set(name, (n = { series: new ActiveSeries(), sweptAt: Number.NEGATIVE_INFINITY, fresh: new Map(), minutes: new Map(), hours: new Map(), requests: new Map() }));
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
      n.series.expire(cutoff);
      n.sweptAt = at;
    };
    if (at - n.sweptAt >= limits.activeMs / 60) sweep();
    const minute = Math.floor(now / MINUTE_MS);
    for (const m of n.fresh.keys()) if (m < minute) n.fresh.delete(m);
    const freshNow = n.fresh.get(minute) ?? 0;
    let fresh = 0;
    for (const s of series) {
      const known = n.series.atOf(s.id);
      if (known !== undefined && known > cutoff) continue;
      if (limits.maxActiveSeries !== undefined && n.series.size + fresh >= limits.maxActiveSeries) {
        if (n.sweptAt !== at) sweep();
        if (n.series.size + fresh >= limits.maxActiveSeries)
          return Promise.resolve({ admitted: false, limit: 'maxActiveSeries', max: limits.maxActiveSeries, metric: s.metric });
      }
      if (limits.maxNewSeriesPerMinute !== undefined && freshNow + fresh >= limits.maxNewSeriesPerMinute)
        return Promise.resolve({ admitted: false, limit: 'maxNewSeriesPerMinute', max: limits.maxNewSeriesPerMinute, metric: s.metric });
      fresh++;
    }
    for (const s of series) n.series.touch(s.id, s.metric, at);
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
    n.series.countAfter(cutoff, (metric) => of(metric).activeSeries++);
    const minute = Math.floor(now / MINUTE_MS);
    const hour = Math.floor(now / HOUR_MS);
    for (const [m, b] of n.minutes) if (m > minute - 60 && m <= minute) for (const [metric, c] of b) of(metric).samplesHour += c;
    for (const [h, b] of n.hours) if (h > hour - 24 && h <= hour) for (const [metric, c] of b) of(metric).samplesDay += c;
    return Promise.resolve([...out].map(([metric, u]) => ({ metric, ...u })));
  }
}
