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
