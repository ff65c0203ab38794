/**
 * Snappy's block format (github.com/google/snappy, format_description.txt), which Prometheus
 * remote write and read use for their bodies (unframed: one block per message). The format is a
 * varint of the uncompressed length, then elements: literals and back-references (copies).
 *
 * Hand-written rather than a dependency: the format is two pages, the decoder must refuse
 * corrupt or hostile input by bounds checks (never read or write out of range, never allocate
 * more than the caller allows before seeing the data), and libs/format takes no dependencies.
 */

export class SnappyError extends Error {
  constructor(message: string) {
    super(`snappy: ${message}`);
    this.name = 'SnappyError';
  }
}

/** The uncompressed length a block announces (its leading varint). */
export function snappyLength(src: Uint8Array): number {
  return readLength(src).length;
}

function readLength(src: Uint8Array): { length: number; pos: number } {
  let length = 0;
  let shift = 0;
  let pos = 0;
  for (;;) {
    if (pos >= src.length) throw new SnappyError('truncated length');
    const b = src[pos++]!;
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
    shift += 7;
    if (shift > 28) throw new SnappyError('length varint longer than 5 bytes');
  }
  if (length > 0xffffffff) throw new SnappyError('length beyond 2^32 - 1');
  return { length, pos };
}

/** Decompress one block; refuses blocks announcing more than `maxLength` bytes before allocating. */
export function snappyDecompress(src: Uint8Array, maxLength = Number.MAX_SAFE_INTEGER): Uint8Array {
  const { length, pos: start } = readLength(src);
  if (length > maxLength) throw new SnappyError(`uncompressed length ${length} is over the limit of ${maxLength} bytes`);
  const out = new Uint8Array(length);
  let d = 0;
  let s = start;
  const n = src.length;
  while (s < n) {
    const tag = src[s++]!;
    let len: number;
    let offset: number;
    switch (tag & 3) {
      case 0: {
        len = tag >>> 2;
        if (len >= 60) {
          const bytes = len - 59;
          if (s + bytes > n) throw new SnappyError('truncated literal length');
          len = 0;
          for (let k = 0; k < bytes; k++) len += src[s + k]! * 2 ** (8 * k);
          s += bytes;
        }
        len += 1;
        if (s + len > n) throw new SnappyError('literal runs past the end of the input');
        if (d + len > length) throw new SnappyError('literal runs past the announced length');
        out.set(src.subarray(s, s + len), d);
        s += len;
        d += len;
        continue;
      }
      case 1:
        if (s >= n) throw new SnappyError('truncated copy');
        len = 4 + ((tag >>> 2) & 7);
        offset = ((tag >>> 5) << 8) | src[s++]!;
        break;
      case 2:
        if (s + 2 > n) throw new SnappyError('truncated copy');
        len = (tag >>> 2) + 1;
        offset = src[s]! | (src[s + 1]! << 8);
        s += 2;
        break;
      default:
        if (s + 4 > n) throw new SnappyError('truncated copy');
        len = (tag >>> 2) + 1;
        offset = (src[s]! | (src[s + 1]! << 8) | (src[s + 2]! << 16)) + src[s + 3]! * 2 ** 24;
        s += 4;
    }
    if (offset === 0 || offset > d) throw new SnappyError(`copy offset ${offset} points before the start of the output`);
    if (d + len > length) throw new SnappyError('copy runs past the announced length');
    // Copies may overlap their own output (a run): byte by byte when they do.
    if (offset >= len) out.copyWithin(d, d - offset, d - offset + len);
    else for (let k = 0; k < len; k++) out[d + k] = out[d + k - offset]!;
    d += len;
  }
  if (d !== length) throw new SnappyError(`block holds ${d} bytes but announced ${length}`);
  return out;
}

const MAX_OFFSET = 65_535;

/**
 * Compress one block: greedy matching of 4-byte sequences through a hash table, copies with
 * 2-byte offsets (at most 64 bytes each). Less thorough than the reference encoder, readable by
 * every Snappy decoder.
 */
export function snappyCompress(src: Uint8Array): Uint8Array {
  const n = src.length;
  const out = new Uint8Array(10 + n + Math.ceil(n / 60) * 2 + 16);
  let o = 0;
  let v = n;
  while (v >= 0x80) {
    out[o++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[o++] = v;

  const table = new Int32Array(1 << 14).fill(-1);
  const hash = (i: number) => (Math.imul(src[i]! | (src[i + 1]! << 8) | (src[i + 2]! << 16) | (src[i + 3]! << 24), 0x1e35a7bd) >>> 18) & 0x3fff;
  let literalStart = 0;
  let i = 0;
  const emitLiteral = (from: number, to: number) => {
    let len = to - from;
    if (len === 0) return;
    let p = from;
    while (len > 0) {
      const chunk = Math.min(len, 65_536);
      const l = chunk - 1;
      if (l < 60) out[o++] = l << 2;
      else if (l < 256) {
        out[o++] = 60 << 2;
        out[o++] = l;
      } else {
        out[o++] = 61 << 2;
        out[o++] = l & 0xff;
        out[o++] = l >>> 8;
      }
      out.set(src.subarray(p, p + chunk), o);
      o += chunk;
      p += chunk;
      len -= chunk;
    }
  };
  while (i + 4 <= n) {
    const h = hash(i);
    const candidate = table[h]!;
    table[h] = i;
    if (candidate >= 0 && i - candidate <= MAX_OFFSET && src[candidate] === src[i] && src[candidate + 1] === src[i + 1] && src[candidate + 2] === src[i + 2] && src[candidate + 3] === src[i + 3]) {
      emitLiteral(literalStart, i);
      let len = 4;
      while (i + len < n && src[candidate + len] === src[i + len]) len++;
      const offset = i - candidate;
      let left = len;
      while (left > 0) {
        // A copy of 1..3 bytes does not exist with 2-byte offsets; keep at least 4 for the last.
        const chunk = left > 64 ? (left - 64 < 4 ? 60 : 64) : left;
        out[o++] = ((chunk - 1) << 2) | 2;
        out[o++] = offset & 0xff;
        out[o++] = offset >>> 8;
        left -= chunk;
      }
      i += len;
      literalStart = i;
    } else i++;
  }
  emitLiteral(literalStart, n);
  return out.slice(0, o);
}
