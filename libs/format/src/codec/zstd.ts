import { constants, createZstdCompress, createZstdDecompress, zstdCompressSync, zstdDecompressSync, type ZstdCompress, type ZstdDecompress } from 'node:zlib';

/**
 * zstd compression from one context kept per level, giving the bytes `zstdCompressSync` gives.
 *
 * `zstdCompressSync` creates and frees a compression context per call (~20 µs, whatever the size):
 * for the chunks of a few dozen bytes of a flush of many small series that was most of the cost of
 * a series. Node 24 has no public synchronous call on a kept context, so this drives a kept
 * stream's native handle the way zlib's own `processChunkSync` does (`_handle.writeSync` and
 * `_writeState`: Node internals). The path is checked once against `zstdCompressSync` and given up,
 * for `zstdCompressSync`, if the internals are missing, throw, or give other bytes; a context whose
 * stream reported an error is dropped.
 */
interface NativeZlib {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
}
interface KeptStream {
  _handle: NativeZlib | null;
  _writeState: Uint32Array;
}

const contexts = new Map<number, ZstdCompress>();
/** Payloads above this take the public call: their compression outweighs a context's setup. */
const KEPT_MAX = 32 * 1024;
// Holds any frame of KEPT_MAX bytes (zstd's compress bound adds well under 1 KB to that).
const scratch = new Uint8Array(KEPT_MAX + 4096);
let kept: boolean | undefined;

const publicPath = (payload: Uint8Array, level: number): Uint8Array => zstdCompressSync(payload, { params: { [constants.ZSTD_c_compressionLevel]: level } });

/**
 * The zstd frame of `payload` at `level`: a view that stays valid until the next call (copy what
 * must outlive it).
 */
export function zstdCompress(payload: Uint8Array, level: number): Uint8Array {
  kept ??= probe();
  if (!kept || payload.length > KEPT_MAX) return publicPath(payload, level);
  return keptCompress(payload, level) ?? publicPath(payload, level);
}

/** Whether compression runs on kept contexts (false where Node's internals differ): for tests. */
export function zstdContextKept(): boolean {
  kept ??= probe();
  return kept;
}

function keptCompress(payload: Uint8Array, level: number): Uint8Array | null {
  let stream = contexts.get(level);
  if (!stream) contexts.set(level, (stream = listened(createZstdCompress({ params: { [constants.ZSTD_c_compressionLevel]: level } }))));
  // Output space left over: the frame is complete (payloads are at most KEPT_MAX bytes, whose
  // frames always fit the scratch buffer).
  const left = step(stream, payload, scratch);
  if (left > 0) return scratch.subarray(0, scratch.length - left);
  // An error, or a frame cut short (which leaves the context mid-frame): start over on a new one.
  contexts.delete(level);
  stream.destroy();
  return null;
}

/**
 * An error destroys a stream (its handle becomes null, which `step` checks) and is also emitted:
 * without a listener that event would crash the process.
 */
function listened<T extends ZstdCompress | ZstdDecompress>(stream: T): T {
  stream.on('error', () => undefined);
  return stream;
}

/** Whether a stream of this Node has the internals a kept context is driven through (the stream is closed). */
function hasInternals(stream: ZstdCompress | ZstdDecompress): boolean {
  const s = stream as unknown as Partial<KeptStream>;
  const ok = typeof s._handle?.writeSync === 'function' && s._writeState instanceof Uint32Array;
  stream.close();
  return ok;
}

/** One synchronous call of a kept stream over all of `input` into `out`: the output space left, or -1 when the stream failed or left input untaken. */
function step(stream: ZstdCompress | ZstdDecompress, input: Uint8Array, out: Uint8Array): number {
  const s = stream as unknown as KeptStream;
  const handle = s._handle;
  if (!handle) return -1;
  handle.writeSync(constants.ZSTD_e_end, input, 0, input.length, out, 0, out.length);
  return s._handle && s._writeState[1] === 0 ? s._writeState[0]! : -1;
}

/** The kept path, tried on a few inputs of every kind of block against the public one. */
function probe(): boolean {
  try {
    if (!hasInternals(createZstdCompress())) return false;
    const inputs = [new Uint8Array(0), new Uint8Array(40).fill(7), Uint8Array.from({ length: 300 }, (_, i) => (i * 37) % 11), Uint8Array.from({ length: KEPT_MAX }, (_, i) => (i * 2_654_435_761) >>> 24)];
    for (const level of [1, 3]) {
      for (const input of inputs) {
        const want = publicPath(input, level);
        const got = keptCompress(input, level);
        if (!got || !Buffer.from(want).equals(got)) return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Decompression the same way: `zstdDecompressSync` also makes and frees a context per call
 * (~40 µs for a 3 KB frame, of which the data is a third), and a query decodes a frame per block,
 * footer and series-index block. Frames whose raw length is above this take the public call.
 */
const KEPT_DECOMPRESS_MAX = 1 << 20;
let decompressor: ZstdDecompress | undefined;
let keptDecompress: boolean | undefined;

/**
 * The `rawLen` bytes of zstd frame `data`, or null when the kept context cannot give exactly that
 * (the caller then takes `zstdDecompressSync`, which reports what is wrong): a fresh array.
 */
export function zstdDecompress(data: Uint8Array, rawLen: number): Uint8Array | null {
  keptDecompress ??= probeDecompress();
  if (!keptDecompress || rawLen > KEPT_DECOMPRESS_MAX) return null;
  return decompressKept(data, rawLen);
}

function decompressKept(data: Uint8Array, rawLen: number): Uint8Array | null {
  decompressor ??= listened(createZstdDecompress());
  // One byte more than the frame should give: all input taken and exactly one byte left means the
  // frame ended at rawLen bytes and the context is ready for the next.
  const out = new Uint8Array(rawLen + 1);
  if (step(decompressor, data, out) === 1) return out.subarray(0, rawLen);
  // An error, a frame cut short or one longer than it says: the context may be mid-frame, so a new one.
  decompressor.destroy();
  decompressor = undefined;
  return null;
}

/** The kept path against the public one, and a damaged frame refused without harm to the next. */
function probeDecompress(): boolean {
  try {
    if (!hasInternals(createZstdDecompress())) return false;
    const inputs = [new Uint8Array(40).fill(7), Uint8Array.from({ length: 3000 }, (_, i) => (i * 37) % 11), Uint8Array.from({ length: 70_000 }, (_, i) => (i * 2_654_435_761) >>> 24)];
    for (const input of inputs) {
      const frame = zstdCompressSync(input);
      const damaged = Uint8Array.from(frame);
      damaged[damaged.length >> 1]! ^= 0xff;
      if (decompressKept(frame.subarray(0, frame.length - 3), input.length) !== null) return false;
      if (decompressKept(frame, input.length - 1) !== null) return false;
      decompressKept(damaged, input.length); // refused or not, the next frame must come out right
      const got = decompressKept(frame, input.length);
      if (!got || !Buffer.from(zstdDecompressSync(frame)).equals(got)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Whether decompression runs on a kept context (false where Node's internals differ): for tests. */
export function zstdDecompressKept(): boolean {
  keptDecompress ??= probeDecompress();
  return keptDecompress;
}
