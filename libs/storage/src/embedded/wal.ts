import { crc32 } from 'node:zlib';

/**
 * The embedded hot tier's append-only log on disk. Each record is framed as
 *   u32 length | u32 crc32(payload) | payload
 * so a torn tail (a crash mid-write) is detected on replay and cut off; it was never
 * acknowledged, because appends are acknowledged only after the fsync that covers them.
 */
export type WalRecord =
  | { type: 'append'; ns: string; shard: number; window: number; id: string; key: string; data: Uint8Array }
  | { type: 'release'; ns: string; shard: number; window: number; id: string; length: number }
  | { type: 'generation'; ns: string; shard: number; value: number }
  | { type: 'fence'; ns: string; shard: number; value: number };

const TYPE = { append: 1, release: 2, generation: 3, fence: 4 } as const;

class Writer {
  private chunks: Buffer[] = [];
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u32(b.length);
    this.chunks.push(b);
  }
  u32(n: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(n);
    this.chunks.push(b);
  }
  f64(n: number): void {
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleLE(n);
    this.chunks.push(b);
  }
  bytes(d: Uint8Array): void {
    this.u32(d.length);
    this.chunks.push(Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  }
  byte(n: number): void {
    this.chunks.push(Buffer.of(n));
  }
  done(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

class Reader {
  private pos = 0;
  constructor(private readonly b: Buffer) {}
  byte(): number {
    return this.b.readUInt8(this.pos++);
  }
  u32(): number {
    const v = this.b.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  f64(): number {
    const v = this.b.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }
  str(): string {
    const n = this.u32();
    const s = this.b.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  bytes(): Uint8Array {
    const n = this.u32();
    const d = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return new Uint8Array(d);
  }
}

export function encodeWalRecord(r: WalRecord): Buffer {
  const w = new Writer();
  w.byte(TYPE[r.type]);
  w.str(r.ns);
  w.u32(r.shard);
  switch (r.type) {
    case 'append':
      w.f64(r.window);
      w.str(r.id);
      w.str(r.key);
      w.bytes(r.data);
      break;
    case 'release':
      w.f64(r.window);
      w.str(r.id);
      w.f64(r.length);
      break;
    case 'generation':
    case 'fence':
      w.f64(r.value);
      break;
  }
  const payload = w.done();
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
}

function decodePayload(p: Buffer): WalRecord {
  const r = new Reader(p);
  const type = r.byte();
  const ns = r.str();
  const shard = r.u32();
  switch (type) {
    case TYPE.append:
      return { type: 'append', ns, shard, window: r.f64(), id: r.str(), key: r.str(), data: r.bytes() };
    case TYPE.release:
      return { type: 'release', ns, shard, window: r.f64(), id: r.str(), length: r.f64() };
    case TYPE.generation:
      return { type: 'generation', ns, shard, value: r.f64() };
    case TYPE.fence:
      return { type: 'fence', ns, shard, value: r.f64() };
    default:
      throw new Error(`unknown WAL record type ${type}`);
  }
}

/** Decode every whole, intact record; `validBytes` is where a torn or corrupt tail starts. */
export function decodeWal(buf: Buffer): { records: WalRecord[]; validBytes: number } {
  const records: WalRecord[] = [];
  let pos = 0;
  while (pos + 8 <= buf.length) {
    const len = buf.readUInt32LE(pos);
    const crc = buf.readUInt32LE(pos + 4);
    if (pos + 8 + len > buf.length) break;
    const payload = buf.subarray(pos + 8, pos + 8 + len);
    if (crc32(payload) !== crc) break;
    records.push(decodePayload(payload));
    pos += 8 + len;
  }
  return { records, validBytes: pos };
}
