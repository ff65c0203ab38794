export { S4Client, type S4ClientOptions } from './client.js';
export { S4Writer, type WriterOptions, type WriterStats } from './writer.js';
export {
  S4Error,
  S4HttpError,
  S4NetworkError,
  S4TimeoutError,
  S4ValidationError,
  S4DecodeError,
  S4WriteError,
  S4ClosedError,
  isRetryableStatus,
  type Issue,
} from './errors.js';
export { backoffDelay, DEFAULT_RETRY, type RetryOptions, type RetryPolicy } from './retry.js';
export type { FetchLike, RetryEvent } from './transport.js';
export { MsgpackStreamDecoder } from './codec.js';
export { RecordBatch, type S4Record } from './records.js';
export type {
  Column,
  ExportFormat,
  ExportSpec,
  FieldValue,
  FlushResult,
  JsonValue,
  LatestSpec,
  QueryResult,
  QuerySpec,
  RecordSelector,
  Sample,
  SeriesColumns,
  SeriesInfo,
  SeriesSpec,
  Tags,
  Time,
  TimeRange,
} from './types.js';
