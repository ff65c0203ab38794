import type { SeriesColumns } from '@s4/core';
import { decodeBlockV1 } from './block-v1.js';
import { decodeBlockV2 } from './block-v2.js';
import type { FooterEntry } from './types.js';

export { encodeBlock } from './block-v1.js';
/** Kept here for importers of the former block.ts (the catalog codec). */
export { asCorrupt } from './checks.js';

/**
 * Decodes exactly one block's bytes (the `length` bytes at `offset` of its footer entry);
 * checksum-verified. Pass the entry to also check that the block is the one the footer
 * describes; a version 2 block cannot be read without it (its column directory is in the entry).
 */
export function decodeBlock(bytes: Uint8Array, entry?: FooterEntry): SeriesColumns {
  return entry?.directory ? decodeBlockV2(bytes, entry) : decodeBlockV1(bytes, entry);
}
