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
  /** Compact columns (the SDK asks for them): numbers as integers or float32, `nd` decimal places; strings by dictionary. */
  nd?: number;
  sd?: string[];
  si?: ArrayLike<number>;
  b?: Uint8Array;
  l?: ArrayLike<number>;
  h?: string[][];
  i?: ArrayLike<number>;
  e?: WireNode;
  m?: unknown[];
}

/** A node's values in occurrence order (MISSING where a projection keeps nothing). */
type Values = readonly (JsonValue | typeof MISSING)[];

/** Objects with more keys than this are built by keyed stores, not by a generated literal. */
const MAX_LITERAL_KEYS = 64;

/** Generated object builders by key list, shared by every chunk so that they get hot (see objectBuilder). */
const builders = new Map<string, ((a: readonly JsonValue[]) => JsonValue) | null>();
const MAX_BUILDERS = 4096;

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
 * A builder of objects with these keys, in this order, from their values: a generated object
 * literal (`a => ({"lat": a[0], "lon": a[1]})`), which allocates the object at its final size
 * with one hidden class, where keyed stores into `{}` go through megamorphic stores and a grown
 * property store (with millions of records that is most of the client's time and garbage).
 * Builders are cached by key list across chunks and queries: one generated per shape per chunk
 * would run cold every time. Null (keyed stores) for a shape holding `__proto__` (a literal
 * would set the prototype), a very wide one, or where code generation is forbidden. Keys are
 * JSON-quoted, so a key cannot inject code.
 */
function objectBuilder(keys: readonly string[]): ((a: readonly JsonValue[]) => JsonValue) | null {
  if (keys.length > MAX_LITERAL_KEYS || keys.includes('__proto__') || !canGenerate()) return null;
  const id = JSON.stringify(keys);
  let b = builders.get(id);
  if (b === undefined) {
    if (builders.size >= MAX_BUILDERS) builders.clear();
    const body = keys.map((k, j) => `${JSON.stringify(k)}: a[${j}]`).join(', ');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the code holds JSON-quoted keys only
    b = new Function('a', `return { ${body} };`) as (a: readonly JsonValue[]) => JsonValue;
    builders.set(id, b);
  }
  return b;
}

/** An object from keys and values by keyed stores, leaving MISSING values out. */
function keyedObject(keys: readonly string[], values: readonly (JsonValue | typeof MISSING)[]): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  for (let j = 0; j < keys.length; j++) {
    const x = values[j]!;
    if (x === MISSING) continue;
    const key = keys[j]!;
    // A key named __proto__ is data, never the prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: x, enumerable: true, writable: true, configurable: true });
    else out[key] = x;
  }
  return out;
}

const EMPTY_NUMS = new Float64Array(0);
const EMPTY_BYTES = new Uint8Array(0);

function malformed(what: string): never {
  throw new S4DecodeError(`node column ${what}`);
}

/**
 * Every value of one node column, in occurrence order, built a node at a time: the members'
 * and elements' values first, then this node's objects and arrays from them. Occurrences are
 * stored in document order, so a node's values are consumed front to back by its parent. A
 * loop per node and kind (instead of one recursive call per value) keeps each loop monomorphic.
 */
function nodeValues(node: WireNode): Values {
  const count = node.c;
  const all = node.a;
  const ks = node.ks;
  if (count === 0) return [];
  if (ks === undefined) {
    switch (node.k) {
      case NUM:
        return all ? numbers(node.n, 0, count) : missing(count);
      case STR:
        if (!all) return missing(count);
        if (node.s === undefined || node.s.length < count) malformed('has fewer strings than occurrences');
        return node.s;
      case BOOL:
        return all ? booleans(node.b, 0, count) : missing(count);
      case NULL:
        return all ? new Array<JsonValue>(count).fill(null) : missing(count);
    }
  }
  if (ks !== undefined && ks.length !== count) malformed(`has ${ks.length} kinds for ${count} occurrences`);
  const arrays = new Arrays(node);
  const objects = new Objects(node);
  // Sized up front: filled by index, never grown (these arrays are as long as the node's column).
  const out = new Array<JsonValue | typeof MISSING>(count);
  if (ks === undefined) {
    if (node.k === ARR) for (let i = 0; i < count; i++) out[i] = arrays.next();
    else if (node.k === OBJ) for (let i = 0; i < count; i++) out[i] = objects.next();
    else malformed(`has unknown kind ${node.k}`);
  } else {
    const nums = node.n ?? EMPTY_NUMS;
    const strs = node.s ?? [];
    const bits = node.b ?? EMPTY_BYTES;
    let n = 0;
    let s = 0;
    let b = 0;
    for (let i = 0; i < count; i++) {
      switch (ks[i]) {
        case NULL:
          out[i] = all ? null : MISSING;
          break;
        case BOOL:
          out[i] = all ? ((bits[b >>> 3]! >>> (b & 7)) & 1) === 1 : MISSING;
          b++;
          break;
        case NUM:
          out[i] = all ? nums[n]! : MISSING;
          n++;
          break;
        case STR:
          out[i] = all ? strs[s]! : MISSING;
          s++;
          break;
        case ARR:
          out[i] = arrays.next();
          break;
        case OBJ:
          out[i] = objects.next();
          break;
        default:
          malformed(`has unknown kind ${ks[i]}`);
      }
    }
    if (all && (n > nums.length || s > strs.length || b > bits.length * 8)) malformed('has fewer values than occurrences');
  }
  arrays.done();
  objects.done();
  return out;
}

/**
 * A node's numbers as they came (a view, not a copy): parents read them by index like any other
 * values, and a copy into a JS array was 10 % of building records (one store per number, and an
 * array of doubles that is garbage once the parents are built).
 */
function numbers(nums: Float64Array | undefined, from: number, count: number): Values {
  if (nums === undefined || nums.length < from + count) malformed('has fewer numbers than occurrences');
  return (from === 0 && count === nums.length ? nums : nums.subarray(from, from + count)) as unknown as Values;
}

function booleans(bits: Uint8Array | undefined, from: number, count: number): JsonValue[] {
  if (bits === undefined || bits.length * 8 < from + count) malformed('has fewer booleans than occurrences');
  const out: JsonValue[] = [];
  for (let i = from; i < from + count; i++) out.push(((bits[i >>> 3]! >>> (i & 7)) & 1) === 1);
  return out;
}

function missing(count: number): Values {
  return new Array<typeof MISSING>(count).fill(MISSING);
}

/** The arrays of a node, in order, from its lengths and its element column's values. */
class Arrays {
  #lens: ArrayLike<number> | undefined;
  #elems: Values = [];
  #mayMiss = false;
  #a = 0;
  #at = 0;

  constructor(node: WireNode) {
    this.#lens = node.l;
    if (node.e !== undefined) {
      this.#elems = nodeValues(node.e);
      this.#mayMiss = !node.e.a;
    }
  }

  next(): JsonValue[] {
    const lens = this.#lens ?? malformed('has arrays but no lengths');
    if (this.#a >= lens.length) malformed('has more arrays than lengths');
    const len = lens[this.#a++]!;
    const from = this.#at;
    const to = (this.#at += len);
    if (to > this.#elems.length) malformed('has fewer elements than its array lengths say');
    const elems = this.#elems;
    if (!this.#mayMiss) {
      // Preallocated and filled, not slice(): an allocation V8 tracks by site, so when the
      // application holds its records it allocates them in the old space directly (pretenuring)
      // instead of copying each survivor through the young generation twice.
      const out = new Array<JsonValue>(len);
      for (let j = 0; j < len; j++) out[j] = elems[from + j] as JsonValue;
      return out;
    }
    const out: JsonValue[] = [];
    for (let j = from; j < to; j++) {
      const x = elems[j]!;
      if (x !== MISSING) out.push(x);
    }
    return out;
  }

  done(): void {
    if (this.#at !== this.#elems.length) malformed('has more elements than its array lengths say');
  }
}

/** One key list of a node's objects: the members it reads (in key order) and how its objects are built. */
interface Shape {
  keys: string[];
  members: number[];
  args: (JsonValue | typeof MISSING)[];
  build: ((a: readonly JsonValue[]) => JsonValue) | null;
}

/** The objects of a node, in order, from its key lists and its members' values. */
class Objects {
  #ids: ArrayLike<number> | undefined;
  #shapes: Shape[] = [];
  #values: Values[] = [];
  #pos: number[] = [];
  #o = 0;

  constructor(node: WireNode) {
    this.#ids = node.i;
    const index = new Map<string, number>();
    const m = node.m ?? [];
    for (let j = 0; j + 1 < m.length; j += 2) {
      const member = checkNode(m[j + 1], String(m[j]));
      index.set(m[j] as string, this.#values.length);
      this.#values.push(nodeValues(member));
      this.#pos.push(0);
    }
    const mayMiss = (k: string): boolean => !checkNode(m[2 * index.get(k)! + 1], k).a;
    for (const keys of node.h ?? []) {
      const picked = keys.filter((k) => index.has(k));
      // A member of a projected node may hold no value (MISSING) and is then left out: keyed stores.
      const build = picked.some(mayMiss) ? null : objectBuilder(picked);
      this.#shapes.push({ keys: picked, members: picked.map((k) => index.get(k)!), args: new Array(picked.length), build });
    }
  }

  next(): JsonValue {
    const id = this.#ids === undefined ? 0 : this.#ids[this.#o]!;
    this.#o++;
    const shape = this.#shapes[id] ?? malformed(`has an object of shape ${id}, beyond its key lists`);
    const { members, args } = shape;
    for (let j = 0; j < members.length; j++) {
      const m = members[j]!;
      const at = this.#pos[m]!;
      this.#pos[m] = at + 1;
      args[j] = this.#values[m]![at]!;
    }
    return shape.build === null ? keyedObject(shape.keys, args) : shape.build(args as JsonValue[]);
  }

  done(): void {
    for (let m = 0; m < this.#values.length; m++) if (this.#pos[m] !== this.#values[m]!.length) malformed('has member values its objects do not use');
  }
}

function checkNode(v: unknown, where: string): WireNode {
  const n = v as WireNode;
  if (n === null || typeof n !== 'object' || typeof n.c !== 'number' || typeof n.k !== 'number') throw new S4DecodeError(`shredded column ${where} is malformed`);
  return n;
}

/**
 * Brings compact node columns (columns=2, apps/api/src/roles/api/output/columns-wire.ts) back
 * to the plain form, in place, for the whole tree: numbers into a Float64Array (integers and
 * float32 convert exactly; `nd` decimal places divide by 10^nd, which the server checked gives
 * every value back), strings from their dictionary. Done when a field is first assembled, so
 * that `column()` of one path expands that path's node only.
 */
function expandNode(node: WireNode, where: string): WireNode {
  expandOwn(node, where);
  if (node.e !== undefined) expandNode(checkNode(node.e, where), where);
  const m = node.m ?? [];
  for (let j = 0; j + 1 < m.length; j += 2) expandNode(checkNode(m[j + 1], where), where);
  return node;
}

/** expandNode for this node's own values, not the nodes below it. */
function expandOwn(node: WireNode, where: string): void {
  const n = node.n as unknown;
  if (n !== undefined && !(n instanceof Float64Array)) {
    if (!ArrayBuffer.isView(n) || n instanceof DataView || typeof (n as unknown as ArrayLike<number>)[0] === 'bigint') throw new S4DecodeError(`shredded column ${where} has malformed numbers`);
    const src = n as unknown as ArrayLike<number>;
    const out = new Float64Array(src.length);
    if (node.nd !== undefined) {
      if (!Number.isInteger(node.nd) || node.nd < 1 || node.nd > 15) throw new S4DecodeError(`shredded column ${where} has ${node.nd} decimal places`);
      const p = 10 ** node.nd;
      for (let i = 0; i < src.length; i++) out[i] = src[i]! / p;
    } else out.set(src);
    node.n = out;
    delete node.nd;
  }
  if (node.si !== undefined) {
    const dict = node.sd ?? [];
    const idx = node.si;
    const out = new Array<string>(idx.length);
    for (let i = 0; i < idx.length; i++) {
      const s = dict[idx[i]!];
      if (s === undefined) throw new S4DecodeError(`shredded column ${where} has a string index beyond its dictionary`);
      out[i] = s;
    }
    node.s = out;
    delete node.si;
    delete node.sd;
  }
}

/** One value per sample of a shredded field (null where a sample lacks it). */
export function assembleShredded(root: unknown, count: number, name: string): FieldValue[] {
  const node = expandNode(checkNode(root, name), name);
  if (node.c !== count) throw new S4DecodeError(`shredded column ${name} has ${node.c} values for ${count} timestamps`);
  const values = nodeValues(node);
  // A number node's values are its Float64Array (numbers()); a field's values are a plain array.
  if (!Array.isArray(values)) return Array.from(values as ArrayLike<number>);
  return node.a ? (values as FieldValue[]) : values.map((x) => (x === MISSING ? null : x));
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
    const names = this.#names;
    const columns = names.map((name) => this.field(name)!);
    // Fields objects by which fields a record has (a bit per field): one builder per combination.
    const wide = names.length > 30;
    const byPresent = new Map<number, { keys: string[]; build: ((a: readonly JsonValue[]) => JsonValue) | null }>();
    const args: JsonValue[] = [];
    for (let i = 0; i < this.length; i++) {
      let present = 0;
      args.length = 0;
      for (let f = 0; f < columns.length; f++) {
        const v = columns[f]![i];
        if (v !== null && v !== undefined) {
          args.push(v);
          if (!wide) present |= 1 << f;
        }
      }
      let fields: Record<string, FieldValue>;
      if (wide) fields = this.#keyedFields(columns, i);
      else {
        let shape = byPresent.get(present);
        if (shape === undefined) {
          const keys = names.filter((_, f) => (present >>> f) & 1);
          byPresent.set(present, (shape = { keys, build: objectBuilder(keys) }));
        }
        // Field names are never __proto__ (the server refuses it), so keyed stores are safe too.
        fields = (shape.build === null ? keyedObject(shape.keys, args) : shape.build(args)) as Record<string, FieldValue>;
      }
      yield { metric: this.metric, tags: this.tags, ts: this.ts[i]!, fields };
    }
  }

  #keyedFields(columns: Column[], i: number): Record<string, FieldValue> {
    const fields: Record<string, FieldValue> = {};
    for (let f = 0; f < columns.length; f++) {
      const v = columns[f]![i];
      if (v !== null && v !== undefined) fields[this.#names[f]!] = v;
    }
    return fields;
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
      for (let j = 0; j + 1 < m.length; j += 2) if (m[j] === key) next = checkNode(m[j + 1], name);
      node = next;
    }
    if (!node || node.k !== NUM || !node.a || node.c !== this.length || !node.n) return null;
    expandOwn(node, name);
    return node.n.length === this.length ? node.n : null;
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
