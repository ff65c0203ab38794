import { CorruptDataError } from '@s4/core';
import type { FooterEntry } from './types.js';

const WHAT = 'segment block';

export function checkTimestamps(ts: readonly number[]): void {
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    if (!Number.isSafeInteger(t)) throw new RangeError(`timestamp ${t} at index ${i} is not a safe integer`);
    if (i > 0 && !(t > ts[i - 1]!)) throw new RangeError(`timestamps must be strictly ascending; index ${i} has ${t} after ${ts[i - 1]}`);
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
