/**
 * The series-cardinality port: which series each namespace has seen lately, and how many samples
 * each metric took, kept where every API process sees the same numbers (the hot tier's server
 * with Redis; memory in embedded mode, where one process is the whole store).
 */

/** A series as the cardinality store knows it. */
export interface SeriesRef {
  readonly metric: string;
  readonly id: string;
}

export interface AdmitLimits {
  readonly maxActiveSeries: number | undefined;
  readonly maxNewSeriesPerMinute: number | undefined;
  /** A series is active while it was written within this long. */
  readonly activeMs: number;
}

export type CardinalityLimit = 'maxActiveSeries' | 'maxNewSeriesPerMinute';

export type AdmitResult =
  | { readonly admitted: true; /** Series seen for the first time (within activeMs). */ readonly fresh: number }
  | { readonly admitted: false; readonly limit: CardinalityLimit; readonly max: number; /** The metric of the first series refused. */ readonly metric: string };

export interface MetricUsage {
  readonly metric: string;
  readonly activeSeries: number;
  /** Samples written in the last 60 minutes (whole minutes, the current one included). */
  readonly samplesHour: number;
  /** Samples written in the last 24 hours (whole hours, the current one included). */
  readonly samplesDay: number;
}

export interface CardinalityStore {
  /**
   * All or nothing, atomically per namespace: either every series is recorded as written at
   * `now` (new ones counted against the limits), or none is and the first limit hit is named.
   * Series already active are always admitted.
   */
  admit(ns: string, series: readonly SeriesRef[], limits: AdmitLimits, now: number): Promise<AdmitResult>;
  /** Add samples written per metric at `now`. */
  addSamples(ns: string, counts: ReadonlyMap<string, number>, now: number): Promise<void>;
  /** Per metric of the namespace with any active series or samples in the last day. */
  usage(ns: string, activeMs: number, now: number): Promise<MetricUsage[]>;
  /** Add object-store requests of the namespace made at `now` (PUT-priced and GET-priced). */
  addRequests(ns: string, put: number, get: number, now: number): Promise<void>;
  /** Requests of the namespace in the last 24 hours (whole hours, the current one included). */
  requests(ns: string, now: number): Promise<{ put: number; get: number }>;
}

export const MINUTE_MS = 60_000;
