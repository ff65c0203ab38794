import { crc32, zstdDecompressSync } from 'node:zlib';
import { CorruptDataError } from '@s4/core';
import { zstdCompress, zstdDecompress } from './zstd.js';

/**
 * The checksummed, optionally compressed envelope around every block, footer and catalog body:
 *   codec u8 (0 stored, 1 zstd) | raw length u32 | data | crc32 u32 of everything before it.
 * The checksum covers the stored bytes, so corruption is caught before the decompressor runs.
 */
export const CODEC_STORED = 0;
export const CODEC_ZSTD = 1;
export const ZSTD_LEVEL = 3;
export const FRAME_OVERHEAD = 9;
// A raw length beyond this is corruption, not data: blocks are one series-hour.
const MAX_RAW = 1 << 30;

export function encodeFrame(payload: Uint8Array, level = ZSTD_LEVEL): Uint8Array {
  let codec = CODEC_STORED;
  let data = payload;
  if (payload.length > 32) {
    const z = zstdCompress(payload, level);
    if (z.length < payload.length) {
      codec = CODEC_ZSTD;
      data = z;
    }
  }
  const out = new Uint8Array(data.length + FRAME_OVERHEAD);
  out[0] = codec;
  putU32(out, 1, payload.length);
  out.set(data, 5);
  putU32(out, 5 + data.length, crc32(out.subarray(0, 5 + data.length)));
  return out;
}

// Little-endian, without a DataView per frame.
function putU32(b: Uint8Array, at: number, v: number): void {
  b[at] = v;
  b[at + 1] = v >>> 8;
  b[at + 2] = v >>> 16;
  b[at + 3] = v >>> 24;
}

export function decodeFrame(bytes: Uint8Array, what: string): Uint8Array {
  if (bytes.length < FRAME_OVERHEAD) throw new CorruptDataError(what, `${bytes.length} bytes is shorter than a frame`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length - 4;
  const want = view.getUint32(end, true);
  const got = crc32(bytes.subarray(0, end));
  if (want !== got) throw new CorruptDataError(what, `crc32 ${hex(got)} does not match the stored ${hex(want)}`);
  const codec = bytes[0];
  const rawLen = view.getUint32(1, true);
  const data = bytes.subarray(5, end);
  if (codec === CODEC_STORED) {
    if (data.length !== rawLen) throw new CorruptDataError(what, `stored length ${data.length} is not ${rawLen}`);
    return data;
  }
  if (codec !== CODEC_ZSTD) throw new CorruptDataError(what, `unknown codec ${codec}`);
  if (rawLen > MAX_RAW) throw new CorruptDataError(what, `raw length ${rawLen} is implausible`);
  const kept = rawLen > 0 ? zstdDecompress(data, rawLen) : null;
  if (kept) return kept;
  let raw: Buffer;
  try {
    raw = zstdDecompressSync(data, { maxOutputLength: Math.max(rawLen, 1) });
  } catch (err) {
    throw new CorruptDataError(what, `zstd: ${(err as Error).message}`);
  }
  if (raw.length !== rawLen) throw new CorruptDataError(what, `decompressed ${raw.length} bytes, expected ${rawLen}`);
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
}

const hex = (n: number) => n.toString(16).padStart(8, '0');
