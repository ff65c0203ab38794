import { crc32 } from 'node:zlib';
import type { HotAppend } from '@s4/core';
import { ByteReader, ByteWriter } from '../codec/bytes.js';

/**
 * The embedded hot tier's append-only log on disk (docs/format/wal.md). Each record is framed as
 *   u32 length | u32 crc32(payload) | payload
 * so a torn tail (a crash mid-write) is detected on replay and cut off; it was never
 * acknowledged, because appends are acknowledged only after the fsync that covers them.
 */
export type WalRecord =
  | ({ type: 'append' } & WalAppend)
  /** Version 2: the appends of one commit in one frame (one header, one checksum), in order. */
  | { type: 'appends'; entries: WalAppend[] }
  | { type: 'release'; ns: string; shard: number; window: number; id: string; length: number }
  /** Version 3: the releases of one flush of a shard-window in one frame, in order. */
  | { type: 'releases'; ns: string; shard: number; window: number; cursors: readonly WalRelease[] }
  | { type: 'generation'; ns: string; shard: number; value: number }
  | { type: 'fence'; ns: string; shard: number; value: number };

/** Bytes `data` is appended to the log of series `id` in the window starting at `window`; `key` is the series key as JSON. */
export interface WalAppend {
  ns: string;
  shard: number;
  window: number;
  id: string;
  key: string;
  data: Uint8Array;
}

/** The first `length` bytes of the log of series `id` are released (flushed). */
export interface WalRelease {
  readonly id: string;
  readonly length: number;
}

export const WAL_RECORD_TYPES = { append: 1, release: 2, generation: 3, fence: 4, appends: 5, releases: 6 } as const;

/** Bytes before each payload: its length and checksum. */
export const WAL_HEADER_BYTES = 8;

/** One framed record: header and payload. */
export function encodeWalRecord(r: WalRecord): Buffer {
  return encodeWalRecordAt(r, undefined);
}

/**
 * encodeWalRecord, and where each append's data starts in the returned bytes pushed to `dataAt`
 * (one entry per append, in order), so the hot tier can find them in the file later without
 * holding them.
 */
export function encodeWalRecordAt(r: WalRecord, dataAt: number[] | undefined): Buffer {
  if (r.type === 'appends') return encodeAppends(r.entries, dataAt);
  if (r.type === 'releases') return encodeReleases(r);
  const w = new ByteWriter(64 + 3 * (r.ns.length + ('id' in r ? r.id.length : 0) + ('key' in r ? r.key.length : 0)) + ('data' in r ? r.data.length : 0));
  w.u32(0);
  w.u32(0);
  w.u8(WAL_RECORD_TYPES[r.type]);
  str(w, r.ns);
  u32(w, r.shard);
  switch (r.type) {
    case 'append':
      w.f64(r.window);
      str(w, r.id);
      str(w, r.key);
      u32(w, r.data.length);
      dataAt?.push(w.pos);
      w.bytes(r.data);
      break;
    case 'release':
      w.f64(r.window);
      str(w, r.id);
      w.f64(r.length);
      break;
    case 'generation':
    case 'fence':
      w.f64(r.value);
      break;
  }
  const payloadBytes = w.pos - WAL_HEADER_BYTES;
  w.patchU32(0, payloadBytes);
  w.patchU32(4, crc32(w.written().subarray(WAL_HEADER_BYTES)));
  const out = w.finish();
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * Decode every whole, intact record; `validBytes` is where a torn or corrupt tail starts. Appends'
 * data are copies, or with `views` views of `buf` (where they sit in it: `data.byteOffset -
 * buf.byteOffset`), for a caller that drops `buf` before it keeps any of them.
 */
export function decodeWal(buf: Uint8Array, options: { views?: boolean } = {}): { records: WalRecord[]; validBytes: number } {
  const views = options.views === true;
  // A plain view: slicing a Buffer goes through its species constructor, several times slower.
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  // One reader over the whole log; each payload must end where its frame says.
  const r = new ByteReader(bytes, 'hot-tier log record');
  // Strings are decoded straight out of the log's bytes (no copy per string).
  const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const str = () => {
    const n = r.u32();
    r.need(n);
    const s = text.toString('utf8', r.pos, r.pos + n);
    r.pos += n;
    return s;
  };
  const records: WalRecord[] = [];
  let pos = 0;
  while (pos + WAL_HEADER_BYTES <= bytes.length) {
    const len = view.getUint32(pos, true);
    const crc = view.getUint32(pos + 4, true);
    const start = pos + WAL_HEADER_BYTES;
    const end = start + len;
    if (end > bytes.length) break;
    if (crc32(bytes.subarray(start, end)) !== crc) break;
    r.pos = start;
    records.push(decodePayload(r, str, bytes, views));
    if (r.pos > end) r.fail(`record at byte ${pos} runs past its length`);
    pos = end;
  }
  return { records, validBytes: pos };
}

function decodePayload(r: ByteReader, str: () => string, bytes: Uint8Array, views: boolean): WalRecord {
  const type = r.u8();
  if (type === WAL_RECORD_TYPES.appends) return decodeAppends(r, str, bytes, views);
  const ns = str();
  const shard = r.u32();
  switch (type) {
    case WAL_RECORD_TYPES.releases: {
      const window = r.f64();
      const cursors: WalRelease[] = [];
      for (let n = r.u32(); n > 0; n--) cursors.push({ id: str(), length: r.f64() });
      return { type: 'releases', ns, shard, window, cursors };
    }
    case WAL_RECORD_TYPES.append:
      return { type: 'append', ns, shard, ...readAppendBody(r, str, bytes, views) };
    case WAL_RECORD_TYPES.release:
      return { type: 'release', ns, shard, window: r.f64(), id: str(), length: r.f64() };
    case WAL_RECORD_TYPES.generation:
      return { type: 'generation', ns, shard, value: r.f64() };
    case WAL_RECORD_TYPES.fence:
      return { type: 'fence', ns, shard, value: r.f64() };
    default:
      return r.fail(`unknown record type ${type}`);
  }
}

/**
 * Many appends as one `appends` frame (type 5): a write of 40,000 series was 40,000 frames, each
 * its own buffer, checksum and copy, which cost more than the rest of the hot tier's work. Written
 * straight into one buffer sized from the entries; namespaces once, in a table.
 */
export function encodeWalAppends(entries: readonly WalAppend[]): Buffer {
  return encodeAppends(entries, undefined);
}

function encodeAppends(entries: readonly WalAppend[], dataAt: number[] | undefined): Buffer {
  const names = new Map<string, number>();
  let bound = WAL_HEADER_BYTES + 1 + 4 + 4;
  // Appends come in runs of one namespace (usually all of them): the table is looked at when it changes.
  let lastNs: string | null = null;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.ns !== lastNs && !names.has((lastNs = e.ns))) {
      names.set(e.ns, names.size);
      bound += 4 + 3 * e.ns.length;
    }
    bound += 4 + 4 + 8 + 4 + 3 * e.id.length + 4 + 3 * e.key.length + 4 + e.data.length;
  }
  const b = Buffer.allocUnsafe(bound);
  let p = appendsHead(b, names, entries.length);
  const putU32 = (n: number) => {
    b.writeUInt32LE(checkedU32(n), p);
    p += 4;
  };
  const putStr = (s: string) => {
    p = putWstr(b, p, s);
  };
  lastNs = null;
  let nsIndex = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.ns !== lastNs) nsIndex = names.get((lastNs = e.ns))!;
    putU32(nsIndex);
    putU32(e.shard);
    b.writeDoubleLE(e.window, p);
    p += 8;
    putStr(e.id);
    putStr(e.key);
    const data = e.data;
    const n = data.length;
    putU32(n);
    dataAt?.push(p);
    // A scrape's record is a few bytes: a loop, where TypedArray#set's call costs more than the copy.
    if (n <= 64) for (let j = 0; j < n; j++) b[p + j] = data[j]!;
    else b.set(data, p);
    p += n;
  }
  return sealRecord(b, p);
}

/**
 * The releases of a flushed shard-window as one `releases` frame (type 6): a flush of 60,000
 * series logs was 60,000 frames, each its own buffer, writer and checksum, the largest item of the
 * HTTP thread at a million series. Written straight into one buffer sized from the cursors.
 */
function encodeReleases(r: { ns: string; shard: number; window: number; cursors: readonly WalRelease[] }): Buffer {
  const { cursors } = r;
  let bound = WAL_HEADER_BYTES + 1 + 4 + 3 * r.ns.length + 4 + 8 + 4;
  for (let i = 0; i < cursors.length; i++) bound += 4 + 3 * cursors[i]!.id.length + 8;
  const b = Buffer.allocUnsafe(bound);
  let p = WAL_HEADER_BYTES;
  b[p++] = WAL_RECORD_TYPES.releases;
  p = putWstr(b, p, r.ns);
  b.writeUInt32LE(checkedU32(r.shard), p);
  b.writeDoubleLE(r.window, p + 4);
  b.writeUInt32LE(cursors.length, p + 12);
  p += 16;
  for (let i = 0; i < cursors.length; i++) {
    const c = cursors[i]!;
    p = putWstr(b, p, c.id);
    b.writeDoubleLE(c.length, p);
    p += 8;
  }
  return sealRecord(b, p);
}

/** `s` as a wstr at `p` of `b` (room for 4 + 3 × its length); where the next field starts. */
function putWstr(b: Buffer, p: number, s: string): number {
  const at = p + 4;
  let i = 0;
  // ASCII (ids, most keys) by hand: the UTF-8 encoder's call costs more than these short strings.
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    b[at + i] = c;
  }
  const n = i === s.length ? i : b.write(s, at, 'utf8');
  b.writeUInt32LE(n, p);
  return at + n;
}

function checkedU32(n: number): number {
  if (!(n >= 0 && n <= 0xffff_ffff)) throw new RangeError(`hot-tier log: ${n} does not fit a u32`);
  return n;
}

/** An `appends` record's head after the record header: its type, the namespace table, the append count. Where the appends start. */
function appendsHead(b: Buffer, names: ReadonlyMap<string, number>, count: number): number {
  let p = WAL_HEADER_BYTES;
  b[p++] = WAL_RECORD_TYPES.appends;
  b.writeUInt32LE(names.size, p);
  p += 4;
  for (const ns of names.keys()) {
    const n = b.write(ns, p + 4, 'utf8');
    b.writeUInt32LE(n, p);
    p += 4 + n;
  }
  b.writeUInt32LE(count, p);
  return p + 4;
}

/** The record header (body length and CRC) written over b[0, WAL_HEADER_BYTES) for the body ending at `p`: the record. */
function sealRecord(b: Buffer, p: number): Buffer {
  b.writeUInt32LE(p - WAL_HEADER_BYTES, 0);
  b.writeUInt32LE(crc32(b.subarray(WAL_HEADER_BYTES, p)), 4);
  return b.subarray(0, p);
}

/**
 * The series part of an append in an `appends` record, `id <wstr> │ key <wstr>`, as
 * encodeHotAppends copies it: made once for a series written every scrape (the embedded hot tier
 * keeps it beside the series key), where writing both strings again per append was most of the
 * cost of encoding a scrape's record. A view of Node's shared pool (no buffer of its own).
 */
export function walSeriesBytes(id: string, key: string): Uint8Array {
  const idBytes = Buffer.byteLength(id, 'utf8');
  const keyBytes = Buffer.byteLength(key, 'utf8');
  const b = Buffer.allocUnsafe(8 + idBytes + keyBytes);
  b.writeUInt32LE(idBytes, 0);
  b.write(id, 4, 'utf8');
  b.writeUInt32LE(keyBytes, 4 + idBytes);
  b.write(key, 8 + idBytes, 'utf8');
  return b;
}

/**
 * entries[from, to) as one `appends` record, byte for byte what encodeWalAppends writes for the
 * same appends (ns and shard from `ref`, the key as its JSON): `series[i - from]` is entry i's
 * series part (walSeriesBytes), copied as it is. Where each append's data starts in the returned
 * bytes goes to `dataAt[i - from]`. No object per append.
 */
export function encodeHotAppends(entries: readonly HotAppend[], from: number, to: number, series: readonly Uint8Array[], dataAt: Uint32Array): Buffer {
  const names = new Map<string, number>();
  let bound = WAL_HEADER_BYTES + 1 + 4 + 4;
  let lastNs: string | null = null;
  for (let i = from; i < to; i++) {
    const e = entries[i]!;
    const ns = e.ref.ns;
    if (ns !== lastNs && !names.has((lastNs = ns))) {
      names.set(ns, names.size);
      bound += 4 + 3 * ns.length;
    }
    bound += 4 + 4 + 8 + series[i - from]!.length + 4 + e.data.length;
  }
  const b = Buffer.allocUnsafe(bound);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let p = appendsHead(b, names, to - from);
  lastNs = null;
  let nsIndex = 0;
  for (let i = from; i < to; i++) {
    const e = entries[i]!;
    const { ref, data } = e;
    if (ref.ns !== lastNs) nsIndex = names.get((lastNs = ref.ns))!;
    view.setUint32(p, nsIndex, true);
    view.setUint32(p + 4, checkedU32(ref.shard), true);
    view.setFloat64(p + 8, e.window, true);
    p += 16;
    const s = series[i - from]!;
    b.set(s, p);
    p += s.length;
    const n = data.length;
    view.setUint32(p, n, true);
    p += 4;
    dataAt[i - from] = p;
    // A scrape's record is a few bytes: a loop, where TypedArray#set's call costs more than the copy.
    if (n <= 64) for (let j = 0; j < n; j++) b[p + j] = data[j]!;
    else b.set(data, p);
    p += n;
  }
  return sealRecord(b, p);
}

function decodeAppends(r: ByteReader, str: () => string, bytes: Uint8Array, views: boolean): WalRecord {
  const names: string[] = [];
  for (let n = r.u32(); n > 0; n--) names.push(str());
  const count = r.u32();
  const entries: WalAppend[] = [];
  for (let i = 0; i < count; i++) {
    const at = r.u32();
    const ns = names[at];
    if (ns === undefined) return r.fail(`namespace ${at} of an append is not in the record's table of ${names.length}`);
    const shard = r.u32();
    entries.push({ ns, shard, ...readAppendBody(r, str, bytes, views) });
  }
  return { type: 'appends', entries };
}

/** window | id | key | data, as both append record types hold them after namespace and shard. */
function readAppendBody(r: ByteReader, str: () => string, bytes: Uint8Array, views: boolean): { window: number; id: string; key: string; data: Uint8Array } {
  const window = r.f64();
  const id = str();
  const key = str();
  const n = r.u32();
  r.need(n);
  // A copy unless asked: the log file's buffer must not stay alive behind every hot log.
  const data = views ? bytes.subarray(r.pos, r.pos + n) : bytes.slice(r.pos, r.pos + n);
  r.pos += n;
  return { window, id, key, data };
}

/** Lengths and shard numbers are u32: out of range is a caller's bug, never a silently wrapped value. */
function u32(w: ByteWriter, n: number): void {
  w.u32(checkedU32(n));
}

/** u32 byte length, then UTF-8 (unlike the object formats' `str`, whose length is a uvarint). */
function str(w: ByteWriter, s: string): void {
  const b = Buffer.from(s, 'utf8');
  u32(w, b.length);
  w.bytes(b);
}
