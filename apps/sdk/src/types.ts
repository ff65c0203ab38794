/** A JSON value nested inside a field (arrays, objects). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One field of a sample. `null` and a missing field mean the same thing: absent. */
export type FieldValue = JsonValue;

/** Tags are part of a series' identity: `metric` + tags = one series. */
export type Tags = Record<string, string>;

/** One sample as written: a series (metric + tags), a timestamp and its fields. */
export interface Sample {
  metric: string;
  /** Omitted = no tags. */
  tags?: Tags;
  /** Integer milliseconds since the Unix epoch. */
  ts: number;
  /** A plain metric has one field, `value`. `null` or `undefined` = the sample lacks the field. */
  fields: Record<string, FieldValue | undefined>;
}

/** A point in time: integer milliseconds since the Unix epoch, or a Date. */
export type Time = number | Date;

/** Which samples a read returns: one metric, the series whose tags include `tags`, time in [from, to). */
export interface QuerySpec {
  metric: string;
  tags?: Tags;
  /** Inclusive. */
  from: Time;
  /** Exclusive. */
  to: Time;
  /** Only these fields; all fields when omitted. */
  fields?: string[];
  signal?: AbortSignal;
}

/** Which records `records()` reads: one metric, the series whose tags include `tags`, optionally only some paths. */
export interface RecordSelector {
  metric: string;
  tags?: Tags;
  /** Projection paths (`imu.vibration`, `sats.prn`); whole records when omitted. */
  fields?: string[];
  signal?: AbortSignal;
}

/** [from, to): from inclusive, to exclusive. */
export interface TimeRange {
  from: Time;
  to: Time;
}

/**
 * A column of field values, one per timestamp. A `Float64Array` when every value of the column
 * is a number; otherwise an array in which `null` marks a sample without that field.
 */
export type Column = Float64Array | FieldValue[];

/**
 * Samples of one series as columns. `ts` holds integer milliseconds since the epoch as a
 * `Float64Array` (exact up to 2^53 ms, far beyond year 275 000), ascending and unique; every field
 * column has the same length as `ts`.
 */
export interface SeriesColumns {
  metric: string;
  tags: Tags;
  ts: Float64Array;
  fields: Record<string, Column>;
}

export interface QueryResult {
  /** One entry per series, each series complete (stream chunks already joined). */
  series: SeriesColumns[];
  /** Total number of timestamps across all series. */
  points: number;
}

/** Raw export formats the server can stream. */
export type ExportFormat = 'csv' | 'ndjson' | 'msgpack' | 'json';

export interface ExportSpec extends QuerySpec {
  format: ExportFormat;
}

/** Selects series for `series()`; every part optional. */
/** Which series `latest()` reads, and optionally the window [from, to) to look in. */
export interface LatestSpec {
  metric: string;
  tags?: Tags;
  from?: Time;
  to?: Time;
  fields?: string[];
  signal?: AbortSignal;
}

export interface SeriesSpec {
  metric?: string;
  tags?: Tags;
  from?: Time;
  to?: Time;
  signal?: AbortSignal;
}

export interface SeriesInfo {
  metric: string;
  tags: Tags;
}

/** What an admin flush moved from the hot tier into object storage. */
export interface FlushResult {
  objects: number;
  series: number;
  samples: number;
  bytes: number;
}
