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

/** The next occurrence's value of one node column (MISSING where a projection keeps nothing). */
type Next = () => JsonValue | typeof MISSING;

/** Objects with at most this many keys are built by a generated literal (see objectFactory). */
const MAX_LITERAL_KEYS = 64;

/** Whether code generation is allowed here (a browser page's Content-Security-Policy may forbid it). */
let codegen: boolean | undefined;
/** Tests: run `fn` as on a page that forbids code generation. */
export function withoutCodegen<T>(fn: () => T): T {
  const was = codegen;
  codegen = false;
  try {
    return fn();
  } finally {
    codegen = was;
  }
}
function canGenerate(): boolean {
  if (codegen === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a probe: does this page allow generated code?
      codegen = new Function('return 1')() === 1;
    } catch {
      codegen = false;
    }
  }
  return codegen;
}

/**
 * A builder of the objects of one shape whose members never come out MISSING: a generated
 * object literal (`{"lat": b[0](), "lon": b[1]()}`), several times faster to build than keyed
 * stores into an empty object, which matters with millions of records. Keys are JSON-quoted
 * (no injection), and a shape holding `__proto__` (a literal would set the prototype) or too
 * many keys gets null, as does a page whose policy forbids code generation.
 */
function objectFactory(keys: readonly string[], members: readonly Next[]): (() => JsonValue) | null {
  if (keys.length > MAX_LITERAL_KEYS || keys.includes('__proto__') || !canGenerate()) return null;
  const body = keys.map((k, j) => `${JSON.stringify(k)}: b[${j}]()`).join(', ');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the code holds JSON-quoted keys only
  return new Function('b', `return function () { return { ${body} }; };`)(members) as () => JsonValue;
}

/**
 * The reader of one node column and of the nodes below it: a closure per node, specialised to
 * its kind when it has one (the common case: records of one shape), holding its own read
 * positions. Occurrences are stored in document order, so reading values front to back visits
 * every node's occurrences in order.
 */
function compile(node: WireNode): { next: Next; neverMissing: boolean } {
  const all = node.a;
  const elem = node.e ? compile(node.e) : null;
  const members = new Map<string, { next: Next; neverMissing: boolean }>();
  const m = node.m ?? [];
  for (let j = 0; j + 1 < m.length; j += 2) members.set(m[j] as string, compile(m[j + 1] as WireNode));
  const nums = node.n;
  const strs = node.s;
  const bools = node.b;
  const lens = node.l;
  const ids = node.i;
  let n = 0;
  let s = 0;
  let b = 0;
  let a = 0;
  let o = 0;
  const noElem = (): never => {
    throw new S4DecodeError(`node column has arrays with elements but no element column`);
  };
  const nextElem = elem?.next ?? noElem;
  const array: Next =
    elem === null || elem.neverMissing
      ? () => {
          const len = lens![a++]!;
          const out: JsonValue[] = [];
          for (let j = 0; j < len; j++) out.push(nextElem() as JsonValue);
          return out;
        }
      : () => {
          const len = lens![a++]!;
          const out: JsonValue[] = [];
          for (let j = 0; j < len; j++) {
            const x = nextElem();
            if (x !== MISSING) out.push(x);
          }
          return out;
        };
  // Per shape, a builder of its objects from the members the answer holds.
  const shapes = (node.h ?? []).map((keys): (() => JsonValue) => {
    const picked = keys.filter((k) => members.has(k));
    const readers = picked.map((k) => members.get(k)!);
    const fast = readers.every((r) => r.neverMissing) ? objectFactory(picked, readers.map((r) => r.next)) : null;
    if (fast) return fast;
    return () => {
      const out: { [key: string]: JsonValue } = {};
      for (let j = 0; j < picked.length; j++) {
        const x = readers[j]!.next();
        if (x === MISSING) continue;
        const key = picked[j]!;
        // A key named __proto__ is data, never the prototype.
        if (key === '__proto__') Object.defineProperty(out, key, { value: x, enumerable: true, writable: true, configurable: true });
        else out[key] = x;
      }
      return out;
    };
  });
  const object: Next = ids ? () => shapes[ids[o++]!]!() : (shapes[0] ?? noElem);
  const kindNext = (kind: number): Next => {
    switch (kind) {
      case NULL:
        return all ? () => null : () => MISSING;
      case BOOL:
        return all
          ? () => {
              const i = b++;
              return ((bools![i >>> 3]! >>> (i & 7)) & 1) === 1;
            }
          : () => MISSING;
      case NUM:
        return all ? () => nums![n++]! : () => MISSING;
      case STR:
        return all ? () => strs![s++]! : () => MISSING;
      case ARR:
        return array;
      case OBJ:
        if (shapes.length === 0) throw new S4DecodeError('node column has objects but no key lists');
        return object;
      default:
        throw new S4DecodeError(`node column has unknown kind ${kind}`);
    }
  };
  // Arrays and objects are always values; scalars and nulls of a projected node are MISSING.
  const valueKind = (k: number) => k === ARR || k === OBJ || all;
  const ks = node.ks;
  if (!ks) return { next: node.c === 0 ? () => MISSING : kindNext(node.k), neverMissing: valueKind(node.k) };
  const byKind: Next[] = [];
  let neverMissing = true;
  const seen = new Set<number>();
  for (let i = 0; i < ks.length; i++) seen.add(ks[i]!);
  for (const k of seen) {
    byKind[k] = kindNext(k);
    if (!valueKind(k)) neverMissing = false;
  }
  let k = 0;
  return { next: () => byKind[ks[k++]!]!(), neverMissing };
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
  const { next } = compile(node);
  const out = new Array<FieldValue>(count);
  for (let i = 0; i < count; i++) {
    const x = next();
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
    const fieldsAt = fieldsBuilder(this.#names, this.#names.map((name) => this.field(name)!));
    for (let i = 0; i < this.length; i++) yield { metric: this.metric, tags: this.tags, ts: this.ts[i]!, fields: fieldsAt(i) };
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

/**
 * The fields object of sample i (absent fields left out): generated code with one constant-key
 * store per field where allowed, else a loop. Field names are never __proto__ (the server
 * refuses it), and are JSON-quoted into the code.
 */
function fieldsBuilder(names: readonly string[], columns: readonly Column[]): (i: number) => Record<string, FieldValue> {
  if (canGenerate() && !names.includes('__proto__')) {
    const body = names.map((name, f) => `v = c[${f}][i]; if (v !== null && v !== undefined) o[${JSON.stringify(name)}] = v;`).join('\n');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the code holds JSON-quoted names only
    return new Function('c', `return function (i) { const o = {}; let v; ${body}\nreturn o; };`)(columns) as (i: number) => Record<string, FieldValue>;
  }
  return (i) => {
    const fields: Record<string, FieldValue> = {};
    for (let f = 0; f < names.length; f++) {
      const v = columns[f]![i];
      if (v !== null && v !== undefined) fields[names[f]!] = v;
    }
    return fields;
  };
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
