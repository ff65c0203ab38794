export * from './msgpack.js';
export { concatBytes } from './codec/bytes.js';
export * from './segment/index.js';
export {
  CATALOG_MAGIC,
  CATALOG_VERSION,
  decodeCatalog,
  encodeCatalog,
  MAX_CATALOG_METRICS,
  type Catalog,
  type CatalogEntry,
} from './catalog/catalog.js';
export { DAY_LIST_VERSION, decodeDayList, encodeDayList } from './catalog/day-list.js';
export { RecordEncoder, decodeRecords, decodeRecordsToEncode, type Fields } from './hotlog/records.js';
export { DeferredNumbers, JsonValuePacker, readJsonNumber } from './hotlog/json-values.js';
export { MsgpackValuePacker, mpRead, printable, readMsgpackContainer, readMsgpackNumber, readMsgpackStringHeader } from './hotlog/msgpack-values.js';
export { PackedValue } from './hotlog/packed.js';
export { WAL_HEADER_BYTES, WAL_RECORD_TYPES, decodeWal, encodeHotAppends, encodeWalAppends, encodeWalRecord, encodeWalRecordAt, walSeriesBytes, type WalAppend, type WalRecord, type WalRelease } from './wal/wal.js';
export * from './shred/index.js';
export { PENDING_DELETES_VERSION, decodePendingDeletes, encodePendingDeletes, type PendingDelete } from './catalog/pending-deletes.js';
export { INGEST_MESSAGE_HEADER, INGEST_MESSAGE_VERSION, decodeIngestMessage, encodeIngestAppend, encodeIngestMessage } from './ingest/message.js';
export { formatLine, LineProtocolError, parseLineProtocol, PRECISIONS, toColumns, toMillis, type LineIssue, type LineProtocolOptions, type LineSeries, type ParsedPoints, type Precision } from './protocols/lineprotocol.js';
export { snappyCompress, snappyDecompress, snappyLength, SnappyError } from './protocols/snappy.js';
export { ProtobufError } from './protocols/protobuf.js';
export {
  decodeReadRequest,
  decodeReadResponse,
  decodeWriteRequest,
  decodeWriteRequestV2,
  encodeReadRequest,
  encodeReadResponse,
  encodeWriteRequest,
  encodeWriteRequestV2,
  type DecodedRead,
  type DecodedWrite,
  type LabelMatcher,
  type MatchType,
  type PromSeries,
  type ReadQuery,
} from './protocols/prometheus.js';
export { formatGraphiteLine, graphiteGlob, parseGraphiteLine } from './protocols/graphite.js';
export {
  SERIES_INDEX_MAGIC,
  SERIES_INDEX_VERSION,
  decodeSeriesIndex,
  encodeSeriesIndex,
  indexedEntry,
  type IndexedBlock,
  type IndexedPart,
  type IndexedSeries,
  type Postings,
  type SeriesIndex,
  type SeriesIndexInput,
  type SeriesTable,
  SortedPostings,
  decodedIndexBytes,
  seriesTable,
} from './series-index/series-index.js';
export {
  RAW_MARKER,
  ROLLUP_COLUMNS,
  ROLLUP_COLUMNS_V1,
  bucketsToColumns,
  columnsToBuckets,
  parseRollupSeriesId,
  resolutionMs,
  rollupSeriesId,
  type Bucket,
} from './rollup/rollup.js';
export {
  ROLLUP_GROUP_ROWS,
  bucketsOfGroup,
  decodeRollupObject,
  encodeRollupObject,
  isGroupedRollup,
  keysOfBlock,
  keysOfBlockWith,
  parseGroupEntryId,
  rollupGroupEntries,
  type DecodedRollupSeries,
  type GroupEntryId,
  type GroupedSeries,
  type ResolutionBuckets,
  type RollupObjectInput,
  type RollupSeries,
} from './rollup/groups.js';
