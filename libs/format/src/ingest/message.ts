import { CorruptDataError, keyJson, type HotAppend, type SeriesKey } from '@s4/core';
import { decodeWal, encodeWalRecord } from '../wal/wal.js';

/**
 * An ingest-log message (docs/format/ingest-message.md): the appends of one shard from one write
 * request, as `append` records of the embedded log's framing (wal.md), so each append carries its
 * own CRC and the API's encoding is what the hot tier receives, byte for byte. The version travels
 * in a message header (INGEST_MESSAGE_HEADER), not in the value.
 */
export const INGEST_MESSAGE_HEADER = 's4-format';
export const INGEST_MESSAGE_VERSION = '1';

/** One message value: the appends in order (all of one shard; the caller groups them). */
export function encodeIngestMessage(appends: readonly HotAppend[]): Buffer {
  return Buffer.concat(appends.map((a) => encodeIngestAppend(a)));
}

/** One append as its framed record: callers that pack messages up to a size measure these. */
export function encodeIngestAppend(a: HotAppend): Buffer {
  return encodeWalRecord({ type: 'append', ns: a.ref.ns, shard: a.ref.shard, window: a.window, id: a.id, key: keyJson(a.key), data: a.data });
}

/** The appends of a message; a torn or foreign value is corrupt (the log never tears a message). */
export function decodeIngestMessage(value: Uint8Array, version: string | undefined): HotAppend[] {
  if (version !== INGEST_MESSAGE_VERSION) throw new CorruptDataError('ingest message', `format version ${JSON.stringify(version ?? null)} is not ${INGEST_MESSAGE_VERSION}`);
  const { records, validBytes } = decodeWal(value);
  if (validBytes !== value.length) throw new CorruptDataError('ingest message', `bytes ${validBytes}..${value.length} are not a whole record or fail their checksum`);
  return records.map((r) => {
    if (r.type !== 'append') throw new CorruptDataError('ingest message', `holds a ${r.type} record; only appends belong in the ingest log`);
    // The key was written by JSON.stringify of a validated key: tags is an object of strings.
    const key = JSON.parse(r.key) as SeriesKey;
    return { ref: { ns: r.ns, shard: r.shard }, window: r.window, id: r.id, key, data: r.data };
  });
}
