// The hot-log record codec is a byte format, so it lives in @s4/format (src/hotlog/records.ts,
// specified in libs/format/docs/format/hot-log.md). Kept under its old path for the validator.
export { RecordEncoder, decodeRecords, type Fields } from '@s4/format';
