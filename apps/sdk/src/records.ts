import { S4DecodeError } from './errors.js';
import type { Column, FieldValue, JsonValue, Tags } from './types.js';

/** Kinds of a node column occurrence, as the server numbers them. */
const NULL = 0;
const BOOL = 1;
const NUM = 2;
const STR = 3;
const ARR = 4;
const OBJ = 5;

/** What a projected node has where a scalar or null stood: nothing (the key is left out). */
const MISSING = Symbol('missing');

/**
 * One node column of a shredded field as the server sends it (docs/api.md, "Columnar chunks"):
 * the kind of each occurrence, the values of each kind in occurrence order, array lengths,
 * object key lists, and the nodes below.
 */
interface WireNode {
  c: number;
  k: number;
  ks?: Uint8Array;
  a: boolean;
  n?: Float64Array;
  s?: string[];
  b?: Uint8Array;
  l?: ArrayLike<number>;
  h?: string[][];
  i?: ArrayLike<number>;
  e?: WireNode;
  m?: unknown[];
}

/** A read position in one node column and in each of its members; occurrences are in document order. */
class Cursor {
  k = 0;
  n = 0;
  s = 0;
  b = 0;
  a = 0;
  o = 0;
  readonly node: WireNode;
  readonly elem: Cursor | null;
  readonly members = new Map<string, Cursor>();

  constructor(node: WireNode) {
    this.node = node;
    this.elem = node.e ? new Cursor(node.e) : null;
    const m = node.m ?? [];
    for (let j = 0; j + 1 < m.length; j += 2) this.members.set(m[j] as string, new Cursor(m[j + 1] as WireNode));
  }

  /** The next occurrence's value (MISSING where a projection keeps nothing). */
  take(): JsonValue | typeof MISSING {
    const node = this.node;
    const kind = node.ks ? node.ks[this.k++]! : node.k;
    switch (kind) {
      case NULL:
        return node.a ? null : MISSING;
      case BOOL: {
        const i = this.b++;
        return node.a ? ((node.b![i >>> 3]! >>> (i & 7)) & 1) === 1 : MISSING;
      }
      case NUM: {
        const i = this.n++;
        return node.a ? node.n![i]! : MISSING;
      }
      case STR: {
        const i = this.s++;
        return node.a ? node.s![i]! : MISSING;
      }
      case ARR: {
        const len = node.l![this.a++]!;
        const out: JsonValue[] = [];
        for (let j = 0; j < len; j++) {
          const x = this.elem!.take();
          if (x !== MISSING) out.push(x);
        }
        return out;
      }
      case OBJ: {
        const keys = node.h![node.i ? node.i[this.o++]! : 0]!;
        const out: { [key: string]: JsonValue } = {};
        for (const key of keys) {
          const member = this.members.get(key);
          if (!member) continue;
          const x = member.take();
          if (x === MISSING) continue;
          // A key named __proto__ is data, never the prototype.
          if (key === '__proto__') Object.defineProperty(out, key, { value: x, enumerable: true, writable: true, configurable: true });
          else out[key] = x;
        }
        return out;
      }
      default:
        throw new S4DecodeError(`node column has unknown kind ${kind}`);
    }
  }
}

function checkNode(v: unknown, where: string): WireNode {
  const n = v as WireNode;
  if (n === null || typeof n !== 'object' || typeof n.c !== 'number' || typeof n.k !== 'number') throw new S4DecodeError(`shredded column ${where} is malformed`);
  return n;
}

/** One value per sample of a shredded field (null where a sample lacks it). */
export function assembleShredded(root: unknown, count: number, name: string): FieldValue[] {
  const node = checkNode(root, name);
  if (node.c !== count) throw new S4DecodeError(`shredded column ${name} has ${node.c} values for ${count} timestamps`);
  const c = new Cursor(node);
  const out = new Array<FieldValue>(count);
  for (let i = 0; i < count; i++) {
    const x = c.take();
    out[i] = x === MISSING ? null : x;
  }
  return out;
}

/** One record: the sample's series, time and fields (absent fields left out). */
export interface S4Record {
  metric: string;
  tags: Tags;
  ts: number;
  fields: Record<string, FieldValue>;
}

/**
 * A chunk of one series' records as the server sent them: columns, from which records are built
 * only when asked (`records()`), or single paths read as columns (`column('imu.vibration')`,
 * a Float64Array when every sample has a number there and no array is on the way).
 */
export class RecordBatch {
  readonly metric: string;
  readonly tags: Tags;
  readonly ts: Float64Array;
  readonly length: number;
  readonly #flat: Map<string, Column>;
  readonly #shredded: Map<string, unknown>;
  readonly #names: string[];
  readonly #built = new Map<string, FieldValue[]>();

  constructor(metric: string, tags: Tags, ts: Float64Array, flat: Map<string, Column>, shredded: Map<string, unknown>, names: string[]) {
    this.metric = metric;
    this.tags = tags;
    this.ts = ts;
    this.length = ts.length;
    this.#flat = flat;
    this.#shredded = shredded;
    this.#names = names;
  }

  /** Field names of the chunk, in the server's order. */
  get fieldNames(): readonly string[] {
    return this.#names;
  }

  /** Every value of one top-level field (null where a sample lacks it); nested fields are assembled once, on first use. */
  field(name: string): Column | undefined {
    const flat = this.#flat.get(name);
    if (flat) return flat;
    const root = this.#shredded.get(name);
    if (root === undefined) return undefined;
    let values = this.#built.get(name);
    if (!values) this.#built.set(name, (values = assembleShredded(root, this.length, name)));
    return values;
  }

  /** The records, built one at a time as the loop asks for them. */
  *records(): Generator<S4Record, void, undefined> {
    const columns = this.#names.map((name) => [name, this.field(name)!] as const);
    for (let i = 0; i < this.length; i++) {
      // Field names are never __proto__ (the server refuses it), so plain assignment is safe here.
      const fields: Record<string, FieldValue> = {};
      for (const [name, col] of columns) {
        const v = col[i];
        if (v !== null && v !== undefined) fields[name] = v;
      }
      yield { metric: this.metric, tags: this.tags, ts: this.ts[i]!, fields };
    }
  }

  /**
   * The values at a dotted path (`imu.vibration`; `\.` for a dot inside a key) in every sample:
   * through arrays the path maps over the elements (`sats.prn` gives each sample's list of prn).
   * Undefined where a sample has nothing at the path. Read straight from the number column when
   * the path is plain objects all the way down to numbers present in every sample.
   */
  column(path: string): Float64Array | (FieldValue | undefined)[] {
    const [name, ...keys] = splitPath(path);
    if (name === undefined) throw new RangeError('empty path');
    const direct = this.#numbers(name, keys);
    if (direct) return direct;
    const col = this.field(name);
    const out = new Array<FieldValue | undefined>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = pick(col ? (col[i] ?? null) : null, keys);
    return out;
  }

  #numbers(name: string, keys: string[]): Float64Array | null {
    if (keys.length === 0) {
      const flat = this.#flat.get(name);
      return flat instanceof Float64Array ? flat : null;
    }
    let node = this.#shredded.get(name) as WireNode | undefined;
    for (const key of keys) {
      // Every occurrence an object, every shape having the key: the member has one value per sample, in order.
      if (!node || node.k !== OBJ || node.c !== this.length || !node.h?.every((keys) => keys.includes(key))) return null;
      const m = node.m ?? [];
      let next: WireNode | undefined;
      for (let j = 0; j + 1 < m.length; j += 2) if (m[j] === key) next = m[j + 1] as WireNode;
      node = next;
    }
    return node && node.k === NUM && node.a && node.c === this.length && node.n ? node.n : null;
  }
}

function splitPath(path: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === '\\' && i + 1 < path.length) cur += path[++i];
    else if (ch === '.') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function pick(v: FieldValue, keys: readonly string[], from = 0): FieldValue | undefined {
  if (from === keys.length) return v;
  if (Array.isArray(v)) {
    const out: FieldValue[] = [];
    for (const x of v) {
      const p = pick(x, keys, from);
      if (p !== undefined) out.push(p);
    }
    return out;
  }
  if (v === null || typeof v !== 'object' || !Object.hasOwn(v, keys[from]!)) return undefined;
  return pick(v[keys[from]!]!, keys, from + 1);
}

/** Checks one decoded chunk and keeps it as columns (nested fields still shredded). */
export function toRecordBatch(value: unknown, toColumn: (name: string, column: unknown, n: number, metric: string) => Column): RecordBatch {
  if (value === null || typeof value !== 'object') throw new S4DecodeError('a query chunk is not an object');
  const v = value as { metric?: unknown; tags?: unknown; ts?: unknown; fields?: unknown; shredded?: unknown; names?: unknown[] };
  if (typeof v.metric !== 'string') throw new S4DecodeError('a query chunk has no metric');
  const ts = v.ts instanceof Float64Array ? v.ts : Array.isArray(v.ts) || ArrayBuffer.isView(v.ts) ? Float64Array.from(v.ts as ArrayLike<number>) : undefined;
  if (ts === undefined) throw new S4DecodeError(`a chunk of ${v.metric} has no ts column`);
  const flat = new Map<string, Column>();
  const names: string[] = [];
  if (v.fields !== null && typeof v.fields === 'object')
    for (const [name, column] of Object.entries(v.fields as Record<string, unknown>)) {
      flat.set(name, toColumn(name, column, ts.length, v.metric));
      names.push(name);
    }
  const shredded = new Map<string, unknown>();
  if (v.shredded !== undefined) {
    if (!Array.isArray(v.shredded)) throw new S4DecodeError(`a chunk of ${v.metric} has malformed shredded columns`);
    for (let j = 0; j + 1 < v.shredded.length; j += 2) {
      const name = v.shredded[j] as string;
      shredded.set(name, checkNode(v.shredded[j + 1], name));
      names.push(name);
    }
  }
  // With shredded fields the server lists every field in its order (flat and shredded ones interleave).
  const order = Array.isArray(v.names) && v.names.length === names.length && v.names.every((n) => flat.has(n as string) || shredded.has(n as string)) ? (v.names as string[]) : names;
  return new RecordBatch(v.metric, (v.tags ?? {}) as Tags, ts, flat, shredded, order);
}
