import type { FieldValue, SeriesColumns } from '@s4/core';
import { CorruptDataError } from '@s4/core';
import { ByteReader, ByteWriter, setOwn } from '../codec/bytes.js';
import { decodeColumn, encodeColumn } from '../codec/column.js';
import { decodeFrame, encodeFrame } from '../codec/frame.js';
import { decodeTimestamps, encodeTimestamps } from '../codec/timestamps.js';
import type { FooterEntry } from './types.js';

export const BLOCK_VERSION = 1;
const WHAT = 'segment block';

/**
 * One series' samples as a framed block. Payload:
 *   version u8 | count uvarint | timestamp column | field count uvarint | field columns (by name)
 */
export function encodeBlock(ts: readonly number[], fields: Readonly<Record<string, readonly FieldValue[]>>, level?: number): Uint8Array {
  const n = ts.length;
  for (let i = 0; i < n; i++) {
    const t = ts[i]!;
    if (!Number.isSafeInteger(t)) throw new RangeError(`timestamp ${t} at index ${i} is not a safe integer`);
    if (i > 0 && !(t > ts[i - 1]!)) throw new RangeError(`timestamps must be strictly ascending; index ${i} has ${t} after ${ts[i - 1]}`);
  }
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
 * Decodes exactly one block's bytes (the `length` bytes at `offset` of its footer entry);
 * checksum-verified. Pass the entry to also check that the block is the one the footer describes.
 */
export function decodeBlock(bytes: Uint8Array, entry?: FooterEntry): SeriesColumns {
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

/**
 * The footer and its block must agree, or the reader would trust an index that lies. `fields` must
 * be sorted like the footer's (plain string order; Object.keys puts integer-like names first).
 */
export function checkEntry(e: FooterEntry, ts: readonly number[], fields: readonly string[]): void {
  const n = ts.length;
  const ok =
    n === e.count &&
    (n === 0 ? e.minTs === 0 && e.maxTs === 0 : ts[0] === e.minTs && ts[n - 1] === e.maxTs) &&
    fields.length === e.fields.length &&
    fields.every((f, i) => f === e.fields[i]);
  if (!ok) throw new CorruptDataError(WHAT, `block of ${e.id} disagrees with its footer entry`);
}

/** Anything a decoder throws on bad bytes is corruption to the caller, whatever raised it. */
export function asCorrupt(what: string, err: unknown): CorruptDataError {
  if (err instanceof CorruptDataError) return err;
  return new CorruptDataError(what, `undecodable (${err instanceof Error ? err.message : String(err)})`);
}
