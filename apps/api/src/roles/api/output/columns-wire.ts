import { chargeMemo } from '@s4/engine';
import type { NodeColumn, Selection } from '@s4/format';

/**
 * A shredded field's node columns as the MessagePack answer carries them (docs/api.md,
 * "Columnar chunks"), so that a client builds records only when it wants them:
 *
 *   { c: occurrences, k: kind (0 null, 1 bool, 2 number, 3 string, 4 array, 5 object) or -1,
 *     ks?: Uint8Array kind per occurrence (when k is -1), a: whole values (false: projected),
 *     n?: Float64Array numbers, s?: strings, b?: Uint8Array bitmap of booleans (bit i = i-th boolean, LSB first),
 *     l?: Uint32Array array lengths, h?: object key lists (shapes), i?: Uint32Array shape of each object (when several),
 *     e?: element node, m?: [key, node, key, node, …] member nodes (the selected ones) }
 *
 * The typed arrays are the decoded block's own (views of them for a slice), so nothing is copied
 * before MessagePack writes them. Values of a projected node (a: false) are not sent: a projection keeps only objects and arrays
 * above the selected paths, so only their kinds and lengths are needed.
 *
 * Compact columns (`compact`, asked for with `Accept: application/msgpack; columns=2`, which the
 * SDK sends): numbers that are all integers go as the smallest integer typed array that holds
 * them, all float32 values as a Float32Array, all decimals of at most MAX_DECIMALS places as
 * integers with `nd` (value = n[i] / 10 ** nd, exact: checked by that very division); strings
 * that repeat as `sd` (the distinct strings) and `si` (Uint8/16/32Array, an index per string).
 * DirtMate records go in about half the bytes, which both ends pay for per byte. `owner`: the
 * decoded block (the cached object) the node belongs to, whose cache entry counts the compact
 * forms kept for it. `own`: the node is the block's own (the query reads the whole block), not a
 * slice made for this query, so that forms keyed by its arrays outlive the query (ownDictionary).
 */
export function nodeWire(node: NodeColumn, sel: Selection | undefined, compact = false, owner?: object, own = false): Record<string, unknown> {
  const all = sel?.all ?? true;
  const out: Record<string, unknown> = { c: node.count, k: node.kind, a: all };
  if (node.kinds) out.ks = node.kinds;
  if (all) {
    if (node.nums.length > 0) {
      const c = compact ? compactView(node.nums, owner) : null;
      out.n = c?.n ?? node.nums;
      if (c?.nd) out.nd = c.nd;
    }
    if (node.strs.length > 0) {
      const d = compact ? (own ? ownDictionary(node.strs, owner) : dictionary(node.strs)) : null;
      if (d) {
        out.sd = d.sd;
        out.si = d.si;
      } else out.s = node.strs;
    }
    if (node.bools.length > 0) out.b = node.bools;
  }
  if (node.lens.length > 0) out.l = node.lens;
  if (node.shapes.length > 0) out.h = node.shapes;
  if (node.shapeIds) out.i = node.shapeIds;
  if (node.elem) out.e = nodeWire(node.elem, sel, compact, owner, own);
  const members: unknown[] = [];
  for (const [key, child] of node.children) {
    const s = all ? sel : sel?.keys.get(key);
    if (all || s) members.push(key, nodeWire(child, s, compact, owner, own));
  }
  if (members.length > 0) out.m = members;
  return out;
}

/** Columns shorter than this go as they are: the saving would not pay for the pass. */
const MIN_COMPACT = 16;
/** Decimal places tried for numbers that are neither integers nor float32. */
const MAX_DECIMALS = 4;
const POW10 = [1, 10, 100, 1000, 10_000];

type IntArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array;
type Compact = { n: IntArray | Float32Array; nd?: number } | null;

/**
 * Compact forms by the buffer of a decoded node's numbers: a node column's numbers own their
 * buffer, which never changes (decoded blocks are cached read-only, nodes.ts), and a query sends
 * views of it (slice.ts), so the whole buffer is compacted once and each view takes its part:
 * a form that holds every value of the buffer exactly holds those of any part of it. A form lives
 * as long as its buffer (so as long as its block), and its bytes are counted in the budget of the
 * block cache that holds the block (chargeMemo), so the cache's budget bounds both.
 */
const compacted = new WeakMap<ArrayBufferLike, Compact>();

function compactView(nums: Float64Array, owner: object | undefined): Compact {
  if (nums.length < MIN_COMPACT) return null;
  const buffer = nums.buffer;
  let c = compacted.get(buffer);
  if (c === undefined) {
    compacted.set(buffer, (c = compactNumbers(new Float64Array(buffer, 0, buffer.byteLength >> 3))));
    if (c !== null && owner) chargeMemo(owner, c.n.byteLength);
  }
  if (c === null) return null;
  const at = nums.byteOffset >> 3;
  return c.nd ? { n: c.n.subarray(at, at + nums.length), nd: c.nd } : { n: c.n.subarray(at, at + nums.length) };
}

/** The numbers in fewer bytes, exactly (see nodeWire), or null when only Float64 holds them. */
export function compactNumbers(nums: Float64Array): Compact {
  const m = nums.length;
  if (m < MIN_COMPACT) return null;
  let ints = true;
  let f32 = true;
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < m && (ints || f32); i++) {
    const v = nums[i]!;
    if (ints && !(Number.isInteger(v) && v >= -0x8000_0000 && v < 0x8000_0000 && !Object.is(v, -0))) ints = false;
    if (f32 && Math.fround(v) !== v) f32 = false;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (ints) return { n: intArray(nums, lo, hi, 1) };
  // The fewest decimal places that give every value back by k / 10^nd (a value needing more
  // places raises nd; the values before it still pass with more places).
  let nd = 1;
  lo = 0;
  hi = 0;
  for (let i = 0; i < m && nd <= MAX_DECIMALS; i++) {
    const v = nums[i]!;
    for (; nd <= MAX_DECIMALS; nd++) {
      const p = POW10[nd]!;
      const k = Math.round(v * p);
      if (k / p === v && k >= -0x8000_0000 && k < 0x8000_0000 && !Object.is(v, -0)) break;
    }
  }
  if (nd <= MAX_DECIMALS) {
    const p = POW10[nd]!;
    for (let i = 0; i < m; i++) {
      const k = Math.round(nums[i]! * p);
      if (k < lo) lo = k;
      if (k > hi) hi = k;
    }
    return { n: intArray(nums, lo, hi, p), nd };
  }
  return f32 ? { n: Float32Array.from(nums) } : null;
}

function intArray(nums: Float64Array, lo: number, hi: number, p: number): IntArray {
  const m = nums.length;
  const out = lo >= 0 && hi < 0x100 ? new Uint8Array(m) : lo >= -0x80 && hi < 0x80 ? new Int8Array(m) : lo >= 0 && hi < 0x1_0000 ? new Uint16Array(m) : lo >= -0x8000 && hi < 0x8000 ? new Int16Array(m) : new Int32Array(m);
  for (let i = 0; i < m; i++) out[i] = Math.round(nums[i]! * p);
  return out;
}

type Dictionary = { sd: string[]; si: Uint8Array | Uint16Array | Uint32Array };

/**
 * Dictionaries of a cached block's own string columns, made once (a Map lookup per string was
 * ~8 % of the server's CPU for R4, every query) and counted in the budget of the cache that holds
 * the block; dropped with the column (a WeakMap keyed by the block's array).
 */
const dictionaries = new WeakMap<readonly string[], Dictionary | null>();

function ownDictionary(strs: readonly string[], owner: object | undefined): Dictionary | null {
  let d = dictionaries.get(strs);
  if (d === undefined) {
    dictionaries.set(strs, (d = dictionary(strs)));
    if (d !== null && owner) chargeMemo(owner, d.si.byteLength + 8 * d.sd.length);
  }
  return d;
}

/** Strings as distinct values and an index per string, when they repeat enough to be worth it. */
export function dictionary(strs: readonly string[]): Dictionary | null {
  const m = strs.length;
  if (m < MIN_COMPACT) return null;
  const ids = new Map<string, number>();
  const sd: string[] = [];
  const idx = new Uint32Array(m);
  for (let i = 0; i < m; i++) {
    const s = strs[i]!;
    let id = ids.get(s);
    if (id === undefined) {
      ids.set(s, (id = sd.length));
      sd.push(s);
      if (sd.length * 2 > m) return null;
    }
    idx[i] = id;
  }
  return { sd, si: sd.length <= 0x100 ? Uint8Array.from(idx) : sd.length <= 0x1_0000 ? Uint16Array.from(idx) : idx };
}
