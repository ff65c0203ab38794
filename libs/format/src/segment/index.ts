export { checkEntry, decodeBlock, encodeBlock } from './block.js';
export { decodeFooter, SEGMENT_HEADER_BYTES, SEGMENT_VERSION } from './footer.js';
export { decodeSegment, encodeSegment, readTrailer, SEGMENT_MAGIC, SEGMENT_TRAILER_BYTES } from './segment.js';
export type { EncodeOptions } from './segment.js';
export type { FooterEntry, SegmentFooter, SegmentInput, SegmentSeriesInput, SegmentTrailer } from './types.js';
