import { ByteReader, ByteWriter, setOwn } from '../codec/bytes.js';
import { decodeFrame, encodeFrame } from '../codec/frame.js';
import { assertWellFormed } from '../codec/values.js';
import { asCorrupt } from './block.js';
import type { FooterEntry, SegmentFooter } from './types.js';

export const SEGMENT_VERSION = 1;
/** "S4SG" then version u8 then three zero bytes. */
export const SEGMENT_HEADER_BYTES = 8;
const WHAT = 'segment footer';

/**
 * Footer payload: metric names, tag keys and values and field names are stored once in a string
 * table and referenced by index, because thousands of series of one shard repeat them.
 *   version u8 | ns str | shard uvarint | window svarint | #strings uvarint | strings
 *   | #series uvarint | entries
 * entry: id str | metric ref | #tags uvarint | (key ref, value ref)… | offset uvarint
 *   | length uvarint | count uvarint | minTs svarint | maxTs svarint | #fields uvarint | field ref…
 */
export function encodeFooter(footer: SegmentFooter, level?: number): Uint8Array {
  const table = new Map<string, number>();
  const ref = (s: string) => {
    let i = table.get(s);
    if (i === undefined) {
      assertWellFormed(s);
      i = table.size;
      table.set(s, i);
    }
    return i;
  };
  const entries = new ByteWriter(footer.series.length * 48 + 64);
  for (const e of footer.series) {
    assertWellFormed(e.id);
    entries.str(e.id);
    entries.uvarint(ref(e.metric));
    const keys = Object.keys(e.tags).sort();
    entries.uvarint(keys.length);
    for (const k of keys) {
      entries.uvarint(ref(k));
      entries.uvarint(ref(e.tags[k]!));
    }
    entries.uvarint(e.offset);
    entries.uvarint(e.length);
    entries.uvarint(e.count);
    entries.svarint(e.minTs);
    entries.svarint(e.maxTs);
    entries.uvarint(e.fields.length);
    for (const f of e.fields) entries.uvarint(ref(f));
  }
  const w = new ByteWriter(entries.pos + 1024);
  w.u8(footer.version);
  assertWellFormed(footer.ns);
  w.str(footer.ns);
  w.uvarint(footer.shard);
  w.svarint(footer.window);
  w.uvarint(table.size);
  for (const s of table.keys()) w.str(s);
  w.uvarint(footer.series.length);
  w.bytes(entries.written());
  return encodeFrame(w.written(), level);
}

/** Decodes the footerLength bytes at footerOffset; checksum-verified. */
export function decodeFooter(bytes: Uint8Array): SegmentFooter {
  try {
    const r = new ByteReader(decodeFrame(bytes, WHAT), WHAT);
    const version = r.u8();
    if (version !== SEGMENT_VERSION) r.fail(`unsupported footer version ${version}`);
    const ns = r.str();
    const shard = r.uvarint();
    const window = r.svarint();
    const nStrings = r.count();
    const table: string[] = [];
    for (let i = 0; i < nStrings; i++) table.push(r.str());
    const deref = () => {
      const i = r.uvarint();
      if (i >= nStrings) r.fail(`string ref ${i} outside a table of ${nStrings}`);
      return table[i]!;
    };
    const nSeries = r.count(8);
    const series: FooterEntry[] = [];
    let prevId: string | null = null;
    let prevEnd = SEGMENT_HEADER_BYTES;
    for (let s = 0; s < nSeries; s++) {
      const id = r.str();
      if (prevId !== null && !(id > prevId)) r.fail(`series ${id} out of order or repeated`);
      prevId = id;
      const metric = deref();
      const nTags = r.count(2);
      const tags: Record<string, string> = {};
      let prevKey: string | null = null;
      for (let t = 0; t < nTags; t++) {
        const k = deref();
        if (prevKey !== null && !(k > prevKey)) r.fail(`series ${id}: tag ${k} out of order or repeated`);
        prevKey = k;
        setOwn(tags, k, deref());
      }
      const offset = r.uvarint();
      const length = r.uvarint();
      const count = r.uvarint();
      const minTs = r.svarint();
      const maxTs = r.svarint();
      if (offset < prevEnd) r.fail(`series ${id}: block at ${offset} overlaps the previous one`);
      if (minTs > maxTs) r.fail(`series ${id}: minTs ${minTs} after maxTs ${maxTs}`);
      prevEnd = offset + length;
      const nFields = r.count();
      const fields: string[] = [];
      for (let f = 0; f < nFields; f++) fields.push(deref());
      series.push({ id, metric, tags, offset, length, count, minTs, maxTs, fields });
    }
    r.done();
    return { version, ns, shard, window, series };
  } catch (err) {
    throw asCorrupt(WHAT, err);
  }
}
