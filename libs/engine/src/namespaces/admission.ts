import { ACTIVE_SERIES_MS, LimitError, grown, smallMs, type CardinalityLimit, type CardinalityStore, type NamespacePolicy, type NamespaceSet, type SeriesRef } from '@s4/core';
import { Slices } from '../concurrency.js';
import type { SeriesWrite } from '../write/validate.js';

export interface AdmissionOptions {
  /**
   * A series this process admitted is checked with the store again only after this long (it
   * keeps its series active there): most writes then need no round trip. Default 5 min.
   */
  readonly refreshMs?: number;
  /** How many admitted series this process remembers (default 1,000,000); past it, it starts over. */
  readonly maxKnown?: number;
  /** Told about each refused request (for /metrics). */
  readonly onRefused?: (ns: string, limit: string) => void;
}

/**
 * The namespace limits of a write, checked after validation and before anything is written
 * (`admit`): backfill window, fields per sample, samples per second, and series cardinality
 * (active series, new series per minute) in the shared CardinalityStore. A refused request
 * changes nothing. Existing series always keep writing: only series new to the namespace count
 * against the cardinality limits.
 *
 * Per process: the samples-per-second bucket (each API process allows the rate on its own) and
 * the memo of recently admitted series. Shared: everything in the CardinalityStore.
 */
export class Admission {
  /** Series id → when this process last had it admitted, ms after `base` (series without a mark). */
  private readonly known = new Map<string, number>();
  /**
   * The same per mark (SeriesWrite.mark) for a scanned series: which id held the mark when it was
   * admitted (undefined: none, or forgotten) and when, so a scrape's series need no lookup by their
   * id in a map of every series (issue 12: the largest part of `admit` at 1 M series).
   */
  private markIds: (string | undefined)[] = [];
  private markAt = new Float64Array(1024);
  /**
   * The first admission's time: `known` holds times relative to it, small integers that sit in
   * the map's entry, where an epoch time is a heap number of its own per series (12 days of
   * uptime; after that they are heap numbers again, and still right).
   */
  private base: number | null = null;
  private knownFor: NamespaceSet | null = null;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Samples per namespace and metric not yet added to the store (see flushCounts). */
  private pending = new Map<string, Map<string, number>>();
  private readonly refreshMs: number;
  private readonly maxKnown: number;

  constructor(
    private readonly store: CardinalityStore,
    private readonly policies: () => NamespaceSet,
    private readonly options: AdmissionOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 300_000;
    this.maxKnown = options.maxKnown ?? 1_000_000;
  }

  /**
   * Throws LimitError (400 or 429) naming the limit, the namespace and the metric; records nothing
   * then. The per-series loops give the event loop a turn every `sliceMs` (a request may hold
   * 40,000 series).
   */
  async admit(series: readonly SeriesWrite[], now: number, sliceMs: number | Slices = Number.POSITIVE_INFINITY): Promise<void> {
    const slices = Slices.of(sliceMs);
    this.base ??= now;
    const at = smallMs(now - this.base);
    const set = this.policies();
    // A reload may move metrics to another namespace: re-register their series there.
    if (this.knownFor !== set) {
      this.forget();
      this.knownFor = set;
    }
    const byNs = new Map<string, { policy: NamespacePolicy; check: Checked[]; samples: number; metrics: Map<string, number> }>();
    // Per metric of the request: its policy, its namespace's group and its samples, looked up
    // once per run of one metric (a scrape's metrics alternate series by series: one lookup each).
    const perMetric = new Map<string, MetricRun>();
    let metric: string | null = null;
    let run!: MetricRun;
    for (let i = 0; i < series.length; i++) {
      if ((i & 255) === 255 && slices.due()) await slices.pause();
      const s = series[i]!;
      if (s.key.metric !== metric) {
        metric = s.key.metric;
        let r = perMetric.get(metric);
        if (!r) {
          const policy = set.resolve(metric);
          let g = byNs.get(policy.name);
          if (!g) byNs.set(policy.name, (g = { policy, check: [], samples: 0, metrics: new Map() }));
          perMetric.set(metric, (r = { policy, g, samples: 0 }));
        }
        run = r;
      }
      checkSamples(run.policy, s, now);
      const n = s.ts.length;
      run.samples += n;
      run.g.samples += n;
      const m = s.mark;
      const seen = m === undefined ? this.known.get(s.id) : this.markIds[m] === s.id ? this.markAt[m] : undefined;
      if (seen === undefined || at - seen >= this.refreshMs) run.g.check.push({ metric, id: s.id, mark: m });
    }
    for (const [m, r] of perMetric) r.g.metrics.set(m, r.samples);
    for (const g of byNs.values()) this.takeRate(g.policy, g.samples, now);
    for (const [ns, g] of byNs) {
      if (g.check.length === 0) continue;
      const l = g.policy.limits;
      const verdict = await this.store.admit(ns, g.check, { maxActiveSeries: l.maxActiveSeries, maxNewSeriesPerMinute: l.maxNewSeriesPerMinute, activeMs: ACTIVE_SERIES_MS }, now);
      if (!verdict.admitted) {
        this.options.onRefused?.(ns, verdict.limit);
        throw seriesLimit(verdict.limit, verdict.max, ns, verdict.metric);
      }
    }
    if (this.known.size >= this.maxKnown) this.known.clear();
    for (const g of byNs.values())
      for (let i = 0; i < g.check.length; i++) {
        if ((i & 255) === 255 && slices.due()) await slices.pause();
        const { id, mark } = g.check[i]!;
        if (mark === undefined) this.known.set(id, at);
        else this.noteMark(mark, id, at);
      }
    for (const [ns, g] of byNs) {
      let m = this.pending.get(ns);
      if (!m) this.pending.set(ns, (m = new Map<string, number>()));
      for (const [metric, n] of g.metrics) m.set(metric, (m.get(metric) ?? 0) + n);
    }
  }

  /** Every admitted series forgotten: each is checked with the store again. */
  private forget(): void {
    this.known.clear();
    this.markIds = [];
  }

  /** Series `id`, holding mark `m`, admitted at `at`. */
  private noteMark(m: number, id: string, at: number): void {
    if (m >= this.markAt.length) this.markAt = grown(this.markAt, Math.max(2 * this.markAt.length, m + 1));
    // Holes are filled: a sparse array would be a dictionary.
    while (this.markIds.length < m) this.markIds.push(undefined);
    this.markIds[m] = id;
    this.markAt[m] = at;
  }

  /**
   * Add the samples admitted since the last call to the store; call about once a second. Counts
   * of a process that dies before its next call are lost (they are statistics, not data).
   */
  async flushCounts(now: number): Promise<void> {
    const pending = this.pending;
    if (pending.size === 0) return;
    this.pending = new Map();
    await Promise.all([...pending].map(([ns, counts]) => this.store.addSamples(ns, counts, now)));
  }

  /** Per-namespace token bucket: `maxSamplesPerSecond` tokens a second, a burst of one second's worth. */
  private takeRate(policy: NamespacePolicy, samples: number, now: number): void {
    const rate = policy.limits.maxSamplesPerSecond;
    if (rate === undefined) return;
    const b = this.buckets.get(policy.name) ?? { tokens: rate, at: now };
    b.tokens = Math.min(rate, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    this.buckets.set(policy.name, b);
    if (samples > b.tokens) {
      const wait = Math.max(1, Math.ceil((Math.min(samples, rate) - b.tokens) / rate));
      this.options.onRefused?.(policy.name, 'maxSamplesPerSecond');
      throw new LimitError('maxSamplesPerSecond', rate, `namespace ${policy.name} takes at most ${rate} samples/s (per API process) and this request of ${samples} samples would exceed it; retry after ${wait} s`, 429, wait);
    }
    b.tokens -= samples;
  }
}

/** A series `admit` asks the store about, with its mark (SeriesWrite.mark) when it has one. */
interface Checked extends SeriesRef {
  readonly mark: number | undefined;
}

/** A metric's share of a request in `admit`. */
interface MetricRun {
  readonly policy: NamespacePolicy;
  readonly g: { policy: NamespacePolicy; check: Checked[]; samples: number; metrics: Map<string, number> };
  samples: number;
}

function seriesLimit(limit: CardinalityLimit, max: number, ns: string, metric: string): LimitError {
  const what = limit === 'maxActiveSeries' ? `${max} active series (written within the last hour)` : `${max} new series per minute`;
  return new LimitError(limit, max, `namespace ${ns} has reached its limit of ${what}: new series of metric ${JSON.stringify(metric)} are refused; existing series keep writing`, 429, limit === 'maxNewSeriesPerMinute' ? 60 : undefined);
}

/** Backfill window and fields per sample, as the namespace sets them. */
function checkSamples(policy: NamespacePolicy, s: SeriesWrite, now: number): void {
  const oldest = now - policy.backfillMs;
  const times = s.ts;
  for (let i = 0; i < times.length; i++)
    if (times[i]! < oldest)
      throw new LimitError('backfill', policy.backfillMs, `a sample of metric ${JSON.stringify(s.key.metric)} at ${new Date(times[i]!).toISOString()} is older than namespace ${policy.name}'s backfill window (${policy.backfillMs} ms)`);
  const max = policy.limits.maxFields;
  // The columns of a series are the union of its samples' fields: only a wide union needs a
  // per-sample count (counted without an array per series: a request may hold 40,000 of them).
  let names = 0;
  for (const _ in s.fields) if (++names > max) break;
  if (names <= max) return;
  const columns = Object.values(s.fields);
  for (let j = 0; j < s.ts.length; j++) {
    let n = 0;
    for (const c of columns) if (c[j] !== null) n++;
    if (n > max) throw new LimitError('maxFields', max, `a sample of metric ${JSON.stringify(s.key.metric)} has ${n} fields; namespace ${policy.name} allows ${max}`);
  }
}
