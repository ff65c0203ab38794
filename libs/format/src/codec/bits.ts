/**
 * MSB-first bit stream for the Gorilla float codec. Bits gather in a 32-bit accumulator that is
 * flushed a word at a time; per-bit loops were the codec's bottleneck.
 */
export class BitWriter {
  private buf: Uint8Array;
  private pos = 0;
  private acc = 0;
  private nbits = 0; // bits pending in acc, 0..31

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
  }

  /** Empties the writer for reuse (its buffer is kept). */
  reset(): this {
    this.pos = 0;
    this.acc = 0;
    this.nbits = 0;
    return this;
  }

  /** Appends the low `n` bits of `v` (1 ≤ n ≤ 32), most significant first. */
  write(v: number, n: number): void {
    if (n < 32) v &= (1 << n) - 1;
    const free = 32 - this.nbits;
    if (n < free) {
      this.acc = (this.acc << n) | v;
      this.nbits += n;
      return;
    }
    const rest = n - free;
    const word = free === 32 ? v >>> 0 : ((this.acc << free) | (v >>> rest)) >>> 0;
    if (this.pos + 4 > this.buf.length) this.grow();
    const b = this.buf;
    b[this.pos] = word >>> 24;
    b[this.pos + 1] = word >>> 16;
    b[this.pos + 2] = word >>> 8;
    b[this.pos + 3] = word;
    this.pos += 4;
    this.acc = rest === 0 ? 0 : v & ((1 << rest) - 1);
    this.nbits = rest;
  }

  finish(): Uint8Array {
    const tail = Math.ceil(this.nbits / 8);
    if (this.pos + 4 > this.buf.length) this.grow();
    const word = this.nbits === 0 ? 0 : (this.acc << (32 - this.nbits)) >>> 0;
    for (let i = 0; i < tail; i++) this.buf[this.pos + i] = word >>> (24 - 8 * i);
    return this.buf.slice(0, this.pos + tail);
  }

  private grow(): void {
    const next = new Uint8Array(this.buf.length * 2);
    next.set(this.buf);
    this.buf = next;
  }
}
