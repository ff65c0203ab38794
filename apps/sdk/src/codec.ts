import { Packr, Unpackr } from 'msgpackr';
import { S4DecodeError } from './errors.js';
import { toRecordBatch } from './records.js';
import type { Column, FieldValue, SeriesColumns, Tags } from './types.js';

/**
 * The server's pinned MessagePack options (libs/format): plain maps (no msgpackr records, so any
 * MessagePack decoder reads them) and typed arrays as msgpackr extensions.
 */
export const packr = new Packr({ useRecords: false, moreTypes: true, variableMapSize: true });
export const unpackr = new Unpackr({ useRecords: false, moreTypes: true, mapsAsObjects: true, int64AsType: 'number' });

/**
 * Splits a byte stream holding concatenated MessagePack values back into values. The bytes are
 * scanned as they arrive (headers only: strings, binaries and extensions are skipped by their
 * length), so a value is decoded exactly once, when its last byte is in, and copied at most once
 * (when it spans several network chunks; a value inside one chunk is decoded in place). The
 * scan resumes where it stopped, so a value of many megabytes arriving in small pieces costs
 * linear time.
 */
export class MsgpackStreamDecoder {
  /** Pending bytes: chunks[0] from #head on, then the other chunks whole. */
  #chunks: Uint8Array[] = [];
  #head = 0;
  #pending = 0;
  /** Scan position: chunk index, offset inside that chunk, and bytes from the start of the pending ones. */
  #c = 0;
  #at = 0;
  #scanned = 0;
  /** Items still to scan in each open array or map (a map counts keys and values). */
  #open: number[] = [];
  /** Bytes of complete values at the start of the pending ones. */
  #complete = 0;

  push(chunk: Uint8Array): unknown[] {
    if (chunk.length === 0) return [];
    if (this.#pending === 0) {
      this.#chunks = [chunk];
      this.#head = this.#at = 0;
      this.#c = 0;
    } else this.#chunks.push(chunk);
    this.#pending += chunk.length;
    this.#scan();
    return this.#take();
  }

  /** Call at end of stream: throws if a value was left incomplete. */
  end(): unknown[] {
    if (this.#pending > 0) throw new S4DecodeError('the MessagePack stream ended inside a value (connection cut?)');
    return [];
  }

  /** Byte k after the scan position, or -1 when it has not arrived. */
  #peek(k: number): number {
    if (this.#scanned + k >= this.#pending) return -1;
    let c = this.#c;
    let at = this.#at + k;
    while (at >= this.#chunks[c]!.length) at -= this.#chunks[c++]!.length;
    return this.#chunks[c]![at]!;
  }

  /** A big-endian unsigned integer of n bytes starting k bytes after the scan position (the caller checked they are in). */
  #uint(k: number, n: number): number {
    let v = 0;
    for (let j = 0; j < n; j++) v = v * 256 + this.#peek(k + j);
    return v;
  }

  #scan(): void {
    for (;;) {
      const b = this.#peek(0);
      if (b < 0) return;
      // The header's length, the payload's length, and the items of an array or map it opens.
      let head = 1;
      let body = 0;
      let items = 0;
      if (b <= 0x7f || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) {
        // a fixint, nil or boolean: the header is the value
      } else if (b <= 0x8f) items = (b & 0x0f) * 2;
      else if (b <= 0x9f) items = b & 0x0f;
      else if (b <= 0xbf) body = b & 0x1f;
      else {
        const size = HEADER[b - 0xc0]!;
        if (size === 0) throw new S4DecodeError(`undecodable MessagePack from the server: byte 0x${b.toString(16)} at ${this.#scanned}`);
        if (this.#scanned + size > this.#pending) return;
        const [len, extra, kind] = SIZED[b - 0xc0]!;
        head = size;
        const n = len > 0 ? this.#uint(1, len) : 0;
        if (kind === 0) body = extra + n;
        else if (kind === 1) items = n;
        else items = n * 2;
      }
      if (this.#scanned + head + body > this.#pending) return;
      this.#advance(head + body);
      if (items > 0) this.#open.push(items);
      else this.#closeItem();
    }
  }

  /** One item is complete: count it off its container, closing the containers it completes. */
  #closeItem(): void {
    const open = this.#open;
    for (;;) {
      if (open.length === 0) {
        this.#complete = this.#scanned;
        return;
      }
      const left = open[open.length - 1]! - 1;
      if (left > 0) {
        open[open.length - 1] = left;
        return;
      }
      open.pop();
    }
  }

  #advance(n: number): void {
    this.#scanned += n;
    let at = this.#at + n;
    let c = this.#c;
    while (c < this.#chunks.length && at >= this.#chunks[c]!.length) at -= this.#chunks[c++]!.length;
    this.#c = c;
    this.#at = at;
  }

  /** Decodes the complete values and drops their bytes. */
  #take(): unknown[] {
    const n = this.#complete;
    if (n === 0) return [];
    const first = this.#chunks[0]!;
    let bytes: Uint8Array;
    let dropChunks: number;
    let head: number;
    if (this.#head + n <= first.length) {
      bytes = first.subarray(this.#head, this.#head + n);
      head = this.#head + n;
      dropChunks = 0;
    } else {
      bytes = new Uint8Array(n);
      bytes.set(first.subarray(this.#head), 0);
      let have = first.length - this.#head;
      let c = 1;
      while (c < this.#chunks.length && have + this.#chunks[c]!.length <= n) {
        bytes.set(this.#chunks[c]!, have);
        have += this.#chunks[c++]!.length;
      }
      if (have < n) bytes.set(this.#chunks[c]!.subarray(0, n - have), have);
      head = n - have;
      dropChunks = c;
    }
    if (head === this.#chunks[dropChunks]?.length) {
      dropChunks++;
      head = 0;
    }
    this.#chunks = dropChunks > 0 ? this.#chunks.slice(dropChunks) : this.#chunks;
    this.#head = head;
    this.#c -= dropChunks;
    this.#pending -= n;
    this.#scanned -= n;
    this.#complete = 0;
    if (this.#pending === 0) {
      this.#chunks = [];
      this.#c = this.#at = this.#head = 0;
    }
    try {
      return (unpackr.unpackMultiple(bytes) as unknown[] | undefined) ?? [];
    } catch (error) {
      throw new S4DecodeError(`undecodable MessagePack from the server: ${(error as Error).message}`, { cause: error });
    }
  }
}

/**
 * By first byte - 0xc0: the bytes to read before the payload's length or the item count is known
 * (0: a byte MessagePack never uses), and [bytes of the length field after the first byte,
 * payload bytes besides that length, 0 payload / 1 array / 2 map].
 */
const HEADER: readonly number[] = [
  1, 0, 1, 1, 2, 3, 5, 2, 3, 5, 1, 1, 1, 1, 1, 1, // c0 nil, c1 unused, c2-c3 bool, c4-c6 bin, c7-c9 ext (type byte in the payload), ca-cf numbers
  1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 5, 3, 5, 3, 5, // d0-d3 ints, d4-d8 fixext, d9-db str, dc-dd array, de-df map
];
const SIZED: readonly (readonly [number, number, number])[] = [
  [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [2, 0, 0], [4, 0, 0], [1, 1, 0], [2, 1, 0], [4, 1, 0],
  [0, 4, 0], [0, 8, 0], [0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 8, 0],
  [0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 8, 0], [0, 2, 0], [0, 3, 0], [0, 5, 0], [0, 9, 0], [0, 17, 0],
  [1, 0, 0], [2, 0, 0], [4, 0, 0], [2, 0, 1], [4, 0, 1], [2, 0, 2], [4, 0, 2],
];

export function concatBytes(parts: Uint8Array[], total = parts.reduce((n, p) => n + p.length, 0)): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Checks one decoded series chunk and brings it to the documented shape (nested fields sent as node columns are assembled into values). */
export function toSeriesColumns(value: unknown): SeriesColumns {
  const batch = toRecordBatch(value, checkColumn);
  const fields: Record<string, Column> = {};
  for (const name of batch.fieldNames) {
    const column = batch.field(name)!;
    fields[name] = column instanceof Float64Array ? column : numericColumn(column);
  }
  return { metric: batch.metric, tags: batch.tags, ts: batch.ts, fields };
}

/** One flat column of a chunk: a Float64Array, or values with null where a sample lacks the field. */
export function checkColumn(name: string, column: unknown, n: number, metric: string): Column {
  const numeric = column instanceof Float64Array ? column : undefined;
  const values = numeric ?? (Array.isArray(column) ? (column as FieldValue[]) : ArrayBuffer.isView(column) ? Array.from(column as unknown as ArrayLike<number>) : undefined);
  if (values === undefined || values.length !== n) throw new S4DecodeError(`column ${name} of ${metric} does not match its ts column`);
  return numeric ?? numericColumn(values as FieldValue[]);
}

/** An all-number column becomes a Float64Array whatever the server sent, so the documented type holds. */
function numericColumn(values: FieldValue[]): Column {
  for (const v of values) if (typeof v !== 'number') return values;
  return Float64Array.from(values as number[]);
}

/**
 * Joins consecutive chunks of the same series (the server splits long series) into one series
 * each. A column stays a Float64Array only if it is one in every chunk.
 */
export function joinChunks(chunks: SeriesColumns[]): SeriesColumns[] {
  const out: SeriesColumns[] = [];
  let group: SeriesColumns[] = [];
  const close = (): void => {
    if (group.length > 0) out.push(join(group));
    group = [];
  };
  for (const chunk of chunks) {
    const head = group[0];
    if (head !== undefined && !(head.metric === chunk.metric && sameTags(head.tags, chunk.tags))) close();
    group.push(chunk);
  }
  close();
  return out;
}

function join(group: SeriesColumns[]): SeriesColumns {
  const first = group[0] as SeriesColumns;
  if (group.length === 1) return first;
  const length = group.reduce((n, c) => n + c.ts.length, 0);
  const ts = new Float64Array(length);
  const names = new Set<string>();
  let at = 0;
  for (const c of group) {
    ts.set(c.ts, at);
    at += c.ts.length;
    for (const name of Object.keys(c.fields)) names.add(name);
  }
  const fields: Record<string, Column> = {};
  for (const name of names) {
    const parts = group.map((c) => c.fields[name]);
    if (parts.every((p) => p instanceof Float64Array)) {
      const column = new Float64Array(length);
      let pos = 0;
      for (const p of parts as Float64Array[]) {
        column.set(p, pos);
        pos += p.length;
      }
      fields[name] = column;
    } else {
      const column: FieldValue[] = [];
      group.forEach((c, i) => {
        const p = parts[i];
        if (p === undefined) for (let k = 0; k < c.ts.length; k++) column.push(null);
        else for (const value of p) column.push(value);
      });
      fields[name] = column;
    }
  }
  return { metric: first.metric, tags: first.tags, ts, fields };
}

export function sameTags(a: Tags, b: Tags): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
