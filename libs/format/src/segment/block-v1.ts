import type { FieldValue, SeriesColumns } from '@s4/core';
import { ByteReader, ByteWriter, setOwn } from '../codec/bytes.js';
import { decodeColumn, encodeColumn } from '../codec/column.js';
import { decodeFrame, encodeFrame } from '../codec/frame.js';
import { decodeTimestamps, encodeTimestamps } from '../codec/timestamps.js';
import { asCorrupt, checkEntry, checkTimestamps } from './checks.js';
import type { FooterEntry } from './types.js';

export const BLOCK_VERSION = 1;
const WHAT = 'segment block';

/**
 * One series' samples as a version 1 block (segment writers write version 2, block-v2.ts; this
 * stays for reading old data's tests and for comparisons). One frame whose payload is:
 *   version u8 | count uvarint | timestamp column | field count uvarint | field columns (by name)
 */
export function encodeBlock(ts: readonly number[], fields: Readonly<Record<string, readonly FieldValue[]>>, level?: number): Uint8Array {
  checkTimestamps(ts);
  const n = ts.length;
  const names = Object.keys(fields).sort();
  const w = new ByteWriter(n * 4 + 64);
  w.u8(BLOCK_VERSION);
  w.uvarint(n);
  encodeTimestamps(ts, w);
  w.uvarint(names.length);
  for (const name of names) {
    const col = fields[name]!;
    if (col.length !== n) throw new RangeError(`field ${name} has ${col.length} values for ${n} timestamps`);
    encodeColumn(w, name, col);
  }
  return encodeFrame(w.written(), level);
}

/**
 * Decodes exactly one version 1 block's bytes (the `length` bytes at `offset` of its footer
 * entry); checksum-verified. Pass the entry to also check that the block is the one the footer
 * describes.
 */
export function decodeBlockV1(bytes: Uint8Array, entry?: FooterEntry): SeriesColumns {
  try {
    const payload = decodeFrame(bytes, WHAT);
    const r = new ByteReader(payload, WHAT);
    const version = r.u8();
    if (version !== BLOCK_VERSION) r.fail(`unsupported block version ${version}`);
    const n = r.count();
    const ts = decodeTimestamps(r, n);
    const nFields = r.count(4);
    // No prototype: a field may be called `constructor` (see nameMap in core).
    const out = Object.create(null) as Record<string, FieldValue[]>;
    let prev: string | null = null;
    for (let f = 0; f < nFields; f++) {
      const col = decodeColumn(r, n);
      if (prev !== null && !(col.name > prev)) r.fail(`field ${col.name} out of order or repeated`);
      prev = col.name;
      setOwn(out, col.name, col.values);
    }
    r.done();
    if (entry) checkEntry(entry, ts, Object.keys(out).sort());
    return { ts, fields: out };
  } catch (err) {
    throw asCorrupt(WHAT, err);
  }
}
