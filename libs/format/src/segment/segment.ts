import type { SeriesData } from '@s4/core';
import { CorruptDataError } from '@s4/core';
import { crc32 } from 'node:zlib';
import { ByteWriter } from '../codec/bytes.js';
import { unpackedColumns } from '../hotlog/packed.js';
import { decodeBlock, encodeBlock } from './block.js';
import { encodeBlockV2, encodeBlockV3, type ShredMode } from './block-v2.js';
import { decodeFooter, encodeFooter, SEGMENT_HEADER_BYTES, SEGMENT_VERSION, SEGMENT_VERSIONS } from './footer.js';
import type { FooterEntry, SegmentFooter, SegmentInput, SegmentTrailer } from './types.js';

/** "S4SG": first and last four bytes of every segment object. */
export const SEGMENT_MAGIC = new Uint8Array([0x53, 0x34, 0x53, 0x47]);
/**
 * footerOffset u64 | footerLength u32 | version u8 | reserved 3×u8 (0) | crc32 u32 of the
 * preceding 16 bytes | magic "S4SG". Fixed size, so a reader finds it with one suffix range GET.
 */
export const SEGMENT_TRAILER_BYTES = 24;

export interface EncodeOptions {
  /** zstd level for blocks and footer; the default (3) is what the benchmarks chose. */
  level?: number;
  /**
   * Format version to write: 4 (the default: version 3 whose numbers may also be float32
   * decimals, segment.md encoding 7), 3 (blocks of many samples split into row groups), 2
   * (shredded columns with a column directory, no row groups) or 1 (kept so that the golden v1 file
   * can be re-encoded and sizes compared). A version 3 segment none of whose blocks has row groups
   * is written as version 2, the same bytes a version 2 writer wrote; a version 4 one stays 4.
   */
  version?: 1 | 2 | 3 | 4;
  /** Version 2 and 3: how nested fields are stored (block-v2.ts); 'auto', the default, measures per field. */
  shred?: ShredMode;
  /** Version 3: samples a row group holds at least, on average (GROUP_ROWS). */
  groupRows?: number;
  /** Version 3: values a block of numbers only holds at least to be split (GROUP_NUMBER_CELLS). */
  groupNumberCells?: number;
}

export function encodeSegment(input: SegmentInput, options: EncodeOptions = {}): Uint8Array {
  // Callers mostly pass series in id order already (the flusher and the folds do): a check is cheaper than the sort.
  let sorted = input.series;
  for (let i = 1; i < sorted.length; i++) {
    if (!(sorted[i - 1]!.id < sorted[i]!.id)) {
      sorted = [...input.series].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      break;
    }
  }
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.id === sorted[i - 1]!.id) throw new RangeError(`series ${sorted[i]!.id} appears twice in one segment`);
  }
  const w = new ByteWriter(64 * 1024);
  const asked = options.version ?? SEGMENT_VERSION;
  if (!SEGMENT_VERSIONS.includes(asked)) throw new RangeError(`cannot write segment version ${asked}`);
  const blockOptions = { level: options.level, shred: options.shred, groupRows: options.groupRows, groupNumberCells: options.groupNumberCells, float32: asked >= 4 };
  w.bytes(SEGMENT_MAGIC);
  w.u8(asked); // the version: a version 3 segment without row groups is written as version 2, known after the blocks
  w.bytes(new Uint8Array(3));
  let grouped = false;
  const entries: FooterEntry[] = [];
  for (const s of sorted) {
    // Each series' columns read once: an input may decode them on access (the flusher's does), so a
    // second read of `ts` or `fields` for the footer would decode the series again.
    const { ts, fields } = s;
    const n = ts.length;
    const v2 = asked >= 3 ? encodeBlockV3(ts, fields, blockOptions) : asked === 2 ? encodeBlockV2(ts, fields, blockOptions) : null;
    const bytes = v2 ? v2.bytes : encodeBlock(ts, unpackedColumns(fields), options.level);
    if (v2?.directory.layout.groups) grouped = true;
    entries.push({
      id: s.id,
      metric: s.metric,
      tags: s.tags,
      offset: w.pos,
      length: bytes.length,
      count: n,
      minTs: n > 0 ? ts[0]! : 0,
      maxTs: n > 0 ? ts[n - 1]! : 0,
      fields: Object.keys(fields).sort(),
      ...(v2 ? { directory: v2.directory } : {}),
    });
    w.bytes(bytes);
  }
  const version = asked === 3 && !grouped ? 2 : asked;
  w.raw[4] = version;
  const footerOffset = w.pos;
  const footer = encodeFooter(
    { version, ns: input.ns, shard: input.shard, window: input.window, series: entries },
    options.level,
  );
  w.bytes(footer);
  const trailerAt = w.pos;
  w.u64(footerOffset);
  w.u32(footer.length);
  w.u8(version);
  w.bytes(new Uint8Array(3));
  w.u32(crc32(w.written().subarray(trailerAt, trailerAt + 16)));
  w.bytes(SEGMENT_MAGIC);
  return w.finish();
}

/** Parses the trailer from the last SEGMENT_TRAILER_BYTES bytes of an object (a longer tail is fine). */
export function readTrailer(tail: Uint8Array): SegmentTrailer {
  const what = 'segment trailer';
  if (tail.length < SEGMENT_TRAILER_BYTES) throw new CorruptDataError(what, `${tail.length} bytes is shorter than a trailer`);
  const t = tail.subarray(tail.length - SEGMENT_TRAILER_BYTES);
  if (!hasMagic(t, 20)) throw new CorruptDataError(what, 'magic "S4SG" missing; not a segment or truncated');
  const view = new DataView(t.buffer, t.byteOffset, t.byteLength);
  if (view.getUint32(16, true) !== crc32(t.subarray(0, 16))) throw new CorruptDataError(what, 'crc32 mismatch');
  const version = t[12]!;
  if (!SEGMENT_VERSIONS.includes(version)) throw new CorruptDataError(what, `unsupported segment version ${version}`);
  const hi = view.getUint32(4, true);
  if (hi >= 0x20_0000) throw new CorruptDataError(what, 'footer offset above 2^53');
  return { version, footerOffset: hi * 0x1_0000_0000 + view.getUint32(0, true), footerLength: view.getUint32(8, true) };
}

/**
 * The footer of a whole segment object, with header, trailer and footer cross-checked and every
 * block inside the object: what a reader needs before it decodes any block (decodeSegment, and
 * the folds that decode one series at a time).
 */
export function readSegmentFooter(bytes: Uint8Array): SegmentFooter {
  const what = 'segment';
  if (bytes.length < SEGMENT_HEADER_BYTES + SEGMENT_TRAILER_BYTES) throw new CorruptDataError(what, `${bytes.length} bytes is too short`);
  if (!hasMagic(bytes, 0)) throw new CorruptDataError(what, 'header magic "S4SG" missing');
  const version = bytes[4]!;
  if (!SEGMENT_VERSIONS.includes(version)) throw new CorruptDataError(what, `unsupported header version ${version}`);
  // Reserved for flags of a later version; a reader must not ignore bits it does not know.
  if (bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) throw new CorruptDataError(what, 'reserved header bytes are not zero');
  const trailer = readTrailer(bytes);
  const { footerOffset, footerLength } = trailer;
  if (trailer.version !== version) throw new CorruptDataError(what, `header says version ${version}, trailer ${trailer.version}`);
  const footerEnd = bytes.length - SEGMENT_TRAILER_BYTES;
  if (footerOffset < SEGMENT_HEADER_BYTES || footerOffset + footerLength !== footerEnd) {
    throw new CorruptDataError(what, `footer at ${footerOffset}+${footerLength} does not end at the trailer (${footerEnd})`);
  }
  const footer = decodeFooter(bytes.subarray(footerOffset, footerEnd));
  if (footer.version !== version) throw new CorruptDataError(what, `header says version ${version}, footer ${footer.version}`);
  for (const e of footer.series) if (e.offset + e.length > footerOffset) throw new CorruptDataError(what, `block of ${e.id} runs into the footer`);
  return footer;
}

/** Decodes a whole segment object: header, trailer, footer and every block, cross-checked. */
export function decodeSegment(bytes: Uint8Array): { footer: SegmentFooter; series: SeriesData[] } {
  const footer = readSegmentFooter(bytes);
  const series: SeriesData[] = [];
  for (const e of footer.series) {
    const cols = decodeBlock(bytes.subarray(e.offset, e.offset + e.length), e);
    series.push({ id: e.id, metric: e.metric, tags: e.tags, ts: cols.ts, fields: cols.fields });
  }
  return { footer, series };
}

function hasMagic(b: Uint8Array, at: number): boolean {
  for (let i = 0; i < 4; i++) if (b[at + i] !== SEGMENT_MAGIC[i]) return false;
  return true;
}
