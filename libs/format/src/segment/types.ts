import type { FieldValue } from '@s4/core';

/** One series to pack: `ts` strictly ascending safe integers, each field column as long as `ts`, null = absent. */
export interface SegmentSeriesInput {
  id: string;
  metric: string;
  tags: Record<string, string>;
  ts: number[];
  fields: Record<string, FieldValue[]>;
}

/** Every series of one (namespace, shard, window). */
export interface SegmentInput {
  ns: string;
  shard: number;
  window: number;
  series: SegmentSeriesInput[];
}

/** Where one series' block lives in the object, and what it holds. */
export interface FooterEntry {
  id: string;
  metric: string;
  tags: Record<string, string>;
  /** Byte offset of the block from the start of the object. */
  offset: number;
  /** Byte length of the block, checksum included. */
  length: number;
  /** Samples in the block. */
  count: number;
  /** First and last timestamp; both 0 when count is 0. */
  minTs: number;
  maxTs: number;
  /** Field names, sorted. */
  fields: string[];
  /**
   * Version 2 only: the block's column directory. The block is its chunks back to back; a reader
   * fetches and decompresses only the chunks holding the columns it needs.
   */
  directory?: BlockDirectory;
}

/** What a column of a version 2 block holds (segment.md, "Column directory"). Never renumber. */
export const ColumnRole = {
  /** The timestamps; exactly one per block, path "". */
  Timestamps: 0,
  /** A field stored whole, with a version 1 column encoding. */
  Field: 1,
  /** One path of a shredded field: the field's root or a path below it. */
  Node: 2,
} as const;
export type ColumnRole = (typeof ColumnRole)[keyof typeof ColumnRole];

export interface LayoutColumn {
  readonly role: ColumnRole;
  /** Column path (escaped field name, then `.key` and `[]` steps); "" for the timestamps. */
  readonly path: string;
}

/**
 * Which columns a block has and how they are grouped into chunks (compression frames): per
 * chunk, its columns in payload order. Series of one shard usually share one, so a footer
 * stores each distinct layout once; decoded entries share the object.
 */
export interface BlockLayout {
  /** With `groups`, the chunks of every row group, group after group. */
  readonly chunks: readonly (readonly LayoutColumn[])[];
  /** Version 3: the block is row groups, each decodable alone (segment.md, "Row groups"). */
  readonly groups?: RowGroups;
}

/**
 * How a version 3 block splits its samples: group g holds the samples whose slot
 * (floor(ts / span)) is the slot of the block's first sample plus `slots[g]`, and its columns are
 * `chunks[firstChunk[g] .. firstChunk[g + 1])`, laid out as a version 2 block of its own.
 */
export interface RowGroups {
  /** Milliseconds per slot; divides an hour or a day (ROW_GROUP_SPANS). */
  readonly span: number;
  /** Per group, strictly ascending; the first is 0. */
  readonly slots: readonly number[];
  /** Per group, its first chunk; one more entry, chunks.length, at the end. */
  readonly firstChunk: readonly number[];
}

export interface BlockDirectory {
  readonly layout: BlockLayout;
  /** Byte length of each chunk's frame; the first starts at the block's offset, each next where the previous ends. */
  readonly chunkLengths: readonly number[];
}

export interface SegmentFooter {
  version: number;
  ns: string;
  shard: number;
  window: number;
  /** Sorted by id; blocks are laid out in the same order. */
  series: FooterEntry[];
}

export interface SegmentTrailer {
  version: number;
  footerOffset: number;
  footerLength: number;
}
