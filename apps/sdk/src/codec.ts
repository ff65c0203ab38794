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
 * Splits a byte stream holding concatenated MessagePack values back into values. A value cut by
 * a chunk boundary waits for more bytes; to keep that linear for values of many megabytes, a
 * retry waits until the pending bytes have doubled (or the stream has ended).
 */
export class MsgpackStreamDecoder {
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #retryAt = 0;

  push(chunk: Uint8Array): unknown[] {
    if (chunk.length === 0) return [];
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    if (this.#pendingBytes < this.#retryAt) return [];
    return this.#decode(false);
  }

  /** Call at end of stream: throws if a value was left incomplete. */
  end(): unknown[] {
    if (this.#pendingBytes === 0) return [];
    return this.#decode(true);
  }

  #decode(final: boolean): unknown[] {
    const buffer = this.#pending.length === 1 ? (this.#pending[0] as Uint8Array) : concatBytes(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    try {
      const values = unpackr.unpackMultiple(buffer) as unknown[] | undefined;
      this.#retryAt = 0;
      return values ?? [];
    } catch (error) {
      const e = error as { incomplete?: boolean; lastPosition?: number; values?: unknown[] };
      if (e.incomplete !== true || final) {
        throw new S4DecodeError(final && e.incomplete === true ? 'the MessagePack stream ended inside a value (connection cut?)' : `undecodable MessagePack from the server: ${(error as Error).message}`, { cause: error });
      }
      const rest = buffer.subarray(e.lastPosition ?? 0);
      this.#pending = [rest];
      this.#pendingBytes = rest.length;
      this.#retryAt = rest.length * 2;
      return e.values ?? [];
    }
  }
}

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
