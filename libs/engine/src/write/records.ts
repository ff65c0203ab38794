import { msgpack } from '@s4/format';
import type { FieldValue } from '@s4/core';

/**
 * The bytes of a hot-tier log: concatenated MessagePack arrays `[ts, fields]`, one per write, in
 * arrival order. MessagePack values delimit themselves, so appends need no framing and a log
 * can be cut at any record boundary the flusher read up to.
 */
export type Fields = Record<string, FieldValue>;

export function encodeRecords(ts: readonly number[], rows: readonly Fields[]): Uint8Array {
  if (ts.length === 1) return msgpack.pack([ts[0], rows[0]]);
  const parts = ts.map((t, i) => msgpack.pack([t, rows[i]]));
  return Buffer.concat(parts);
}

export interface DecodedLog {
  ts: number[];
  rows: Fields[];
}

export function decodeRecords(data: Uint8Array): DecodedLog {
  const ts: number[] = [];
  const rows: Fields[] = [];
  if (data.length === 0) return { ts, rows };
  const values = msgpack.unpackMultiple(Buffer.from(data.buffer, data.byteOffset, data.byteLength)) as [number, Fields][];
  for (const [t, f] of values) {
    ts.push(t);
    rows.push(f);
  }
  return { ts, rows };
}
