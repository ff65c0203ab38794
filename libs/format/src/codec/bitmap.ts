import type { ByteReader, ByteWriter } from './bytes.js';

/** Bit i of the bitmap is bit (i % 8) of byte ⌊i / 8⌋, least significant first. */
export function writeBitmap(w: ByteWriter, n: number, bitAt: (i: number) => boolean): void {
  const bytes = (n + 7) >>> 3;
  w.ensure(bytes);
  for (let b = 0; b < bytes; b++) {
    let byte = 0;
    const base = b << 3;
    const lim = Math.min(8, n - base);
    for (let j = 0; j < lim; j++) if (bitAt(base + j)) byte |= 1 << j;
    w.u8(byte);
  }
}

export function readBitmap(r: ByteReader, n: number): Uint8Array {
  const bytes = r.bytes((n + 7) >>> 3);
  // Bits past n must be zero, or a flipped padding bit would go unnoticed.
  const tail = n & 7;
  if (tail !== 0 && bytes[bytes.length - 1]! >>> tail !== 0) r.fail('bitmap padding bits set');
  return bytes;
}

export const bitAt = (bitmap: Uint8Array, i: number): boolean => ((bitmap[i >>> 3]! >>> (i & 7)) & 1) === 1;

export function popcount(bitmap: Uint8Array): number {
  let c = 0;
  for (let i = 0; i < bitmap.length; i++) {
    let v = bitmap[i]!;
    while (v) {
      v &= v - 1;
      c++;
    }
  }
  return c;
}
