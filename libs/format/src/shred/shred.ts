import type { FieldValue } from '@s4/core';
import { writeBitmap } from '../codec/bitmap.js';
import { ByteWriter } from '../codec/bytes.js';
import { encodeFloats } from '../codec/floats.js';
import { encodeStrings } from '../codec/strings.js';
import { assertWellFormed } from '../codec/values.js';
import { ARR, headBytes, PackedValue, readNumber, readString, scalarBytes, sizedKind, sizeOf, STR } from '../hotlog/packed.js';
import { childPath, elementPath, escapeKey } from './path.js';

/**
 * The kind of one value at a path; one per occurrence of the path (segment.md, "Node column").
 * Missing keys are not a kind: an object's shape says which keys it has.
 */
export const Kind = { Null: 0, Bool: 1, Num: 2, Str: 3, Arr: 4, Obj: 5 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];
export const KIND_BITS = 0b11_1111;

/** Beyond this many columns for one field, shredding is not worth its directory: the field is stored whole. */
export const MAX_NODES = 1024;
/** Same limit as the exact value encoding. */
const MAX_DEPTH = 1000;

/** One value-kind-per-occurrence stream and its typed values, for one path of a field. */
class Node {
  readonly kinds: Kind[] = [];
  kindSet = 0;
  readonly nums: number[] = [];
  readonly strs: string[] = [];
  readonly bools: boolean[] = [];
  readonly lens: number[] = [];
  readonly shapes: string[][] = [];
  readonly shapeIds: number[] = [];
  readonly shapeIndex = new Map<string, number>();
  lastShape = -1;
  elem: Node | null = null;
  readonly children = new Map<string, Node>();
  /**
   * The packed keys of the last object seen here, by position: their bytes, strings and child
   * nodes. Records repeat their keys, so a key is mostly compared with these bytes instead of
   * being read into a string and looked up in `children` (visitPacked).
   */
  readonly keyRaw: Uint8Array[] = [];
  readonly keyText: string[] = [];
  readonly keyChild: Node[] = [];
  constructor(readonly path: string) {}
}

class TooManyNodes extends Error {}

export interface ShreddedColumn {
  /** Column path (path.ts): `field`, `field.key`, `field[]`, … */
  path: string;
  body: Uint8Array;
}

/**
 * Shreds one field's column (null = the sample lacks the field) into one column per path, in
 * pre-order (a parent before its children, children in first-seen key order). Returns null when
 * the field needs more than MAX_NODES columns. Throws RangeError on values that are not JSON.
 */
export function shredField(name: string, col: readonly FieldValue[], float32 = false): ShreddedColumn[] | null {
  assertWellFormed(name);
  const root = new Node(escapeKey(name));
  const counter = { nodes: 1 };
  try {
    for (let i = 0; i < col.length; i++) visit(root, col[i] ?? null, 0, counter);
  } catch (err) {
    if (err instanceof TooManyNodes) return null;
    throw err;
  }
  const out: ShreddedColumn[] = [];
  const walk = (node: Node) => {
    out.push({ path: node.path, body: encodeNode(node, float32) });
    if (node.elem) walk(node.elem);
    for (const c of node.children.values()) walk(c);
  };
  walk(root);
  return out;
}

function visit(node: Node, v: FieldValue, depth: number, counter: { nodes: number }): void {
  let kind: Kind;
  switch (typeof v) {
    case 'number':
      kind = Kind.Num;
      node.nums.push(v);
      break;
    case 'boolean':
      kind = Kind.Bool;
      node.bools.push(v);
      break;
    case 'string':
      assertWellFormed(v);
      kind = Kind.Str;
      node.strs.push(v);
      break;
    case 'object':
      if (v === null) {
        kind = Kind.Null;
        break;
      }
      if (v instanceof PackedValue) {
        visitPacked(node, v.bytes, v.start, depth, counter);
        return;
      }
      if (depth >= MAX_DEPTH) throw new RangeError(`nested value deeper than ${MAX_DEPTH}`);
      if (Array.isArray(v)) {
        kind = Kind.Arr;
        node.lens.push(v.length);
        if (v.length > 0) {
          let elem = node.elem;
          if (!elem) {
            if (++counter.nodes > MAX_NODES) throw new TooManyNodes();
            elem = node.elem = new Node(elementPath(node.path));
          }
          for (let j = 0; j < v.length; j++) visit(elem, v[j] ?? null, depth + 1, counter);
        }
      } else {
        const proto = Object.getPrototypeOf(v) as unknown;
        if (proto !== Object.prototype && proto !== null) throw new RangeError('field value is not a JSON value (non-plain object)');
        kind = Kind.Obj;
        const keys = Object.keys(v);
        node.shapeIds.push(shapeOf(node, keys));
        for (const k of keys) {
          let child = node.children.get(k);
          if (!child) {
            if (++counter.nodes > MAX_NODES) throw new TooManyNodes();
            node.children.set(k, (child = new Node(childPath(node.path, k))));
          }
          visit(child, v[k] ?? null, depth + 1, counter);
        }
      }
      break;
    default:
      throw new RangeError(`field value of type ${typeof v} is not a JSON value`);
  }
  node.kinds.push(kind);
  node.kindSet |= 1 << kind;
}

/**
 * `visit` of the value packed at b[p] (a PackedValue's bytes: JSON values only, checked by
 * packedEnd), read from the bytes without building it; returns where the value ends. Every node
 * gets what `visit` of the unpacked value would give it, in the same order.
 */
function visitPacked(node: Node, b: Uint8Array, p: number, depth: number, counter: { nodes: number }): number {
  let kind: Kind;
  const t = b[p]!;
  const size = scalarBytes(t);
  if (size > 0) {
    if (t === 0xc0) kind = Kind.Null;
    else if (t === 0xc2 || t === 0xc3) {
      kind = Kind.Bool;
      node.bools.push(t === 0xc3);
    } else {
      kind = Kind.Num;
      node.nums.push(readNumber(b, p));
    }
    p += size;
  } else {
    const sized = sizedKind(t);
    const n = sizeOf(b, p);
    p += headBytes(t);
    if (sized === STR) {
      const v = readString(b, p, n);
      assertWellFormed(v);
      kind = Kind.Str;
      node.strs.push(v);
      p += n;
    } else {
      if (depth >= MAX_DEPTH) throw new RangeError(`nested value deeper than ${MAX_DEPTH}`);
      if (sized === ARR) {
        kind = Kind.Arr;
        node.lens.push(n);
        if (n > 0) {
          let elem = node.elem;
          if (!elem) {
            if (++counter.nodes > MAX_NODES) throw new TooManyNodes();
            elem = node.elem = new Node(elementPath(node.path));
          }
          for (let j = 0; j < n; j++) p = visitPacked(elem, b, p, depth + 1, counter);
        }
      } else {
        kind = Kind.Obj;
        const raw = node.keyRaw;
        const text = node.keyText;
        const kids = node.keyChild;
        // Whether every key so far is the last shape's: then that shape is this object's, with no keys array made.
        const last = node.lastShape >= 0 ? node.shapes[node.lastShape]! : null;
        let same = last !== null && last.length === n;
        let keys: string[] | null = null;
        for (let j = 0; j < n; j++) {
          const len = sizeOf(b, p);
          const at = p + headBytes(b[p]!);
          p = at + len;
          let k: string;
          let child: Node;
          const r = raw[j];
          if (r !== undefined && r.length === len && sameBytes(b, at, r)) {
            k = text[j]!;
            child = kids[j]!;
          } else {
            k = readString(b, at, len);
            let c = node.children.get(k);
            if (!c) {
              if (++counter.nodes > MAX_NODES) throw new TooManyNodes();
              node.children.set(k, (c = new Node(childPath(node.path, k))));
            }
            child = c;
            raw[j] = b.slice(at, p);
            text[j] = k;
            kids[j] = child;
          }
          if (same && last![j] !== k) same = false;
          if (!same) {
            keys ??= last === null ? [] : last.slice(0, j);
            keys.push(k);
          }
          p = visitPacked(child, b, p, depth + 1, counter);
        }
        // The shape is taken after the members are visited: no member visit touches this node's own lists.
        node.shapeIds.push(same ? node.lastShape : shapeOf(node, keys ?? []));
      }
    }
  }
  node.kinds.push(kind);
  node.kindSet |= 1 << kind;
  return p;
}

function sameBytes(b: Uint8Array, at: number, r: Uint8Array): boolean {
  for (let i = 0; i < r.length; i++) if (b[at + i] !== r[i]) return false;
  return true;
}

/** The id of an object's key sequence in its node's shape dictionary (first-seen order). */
function shapeOf(node: Node, keys: string[]): number {
  const last = node.lastShape;
  if (last >= 0) {
    const s = node.shapes[last]!;
    if (s.length === keys.length) {
      let same = true;
      for (let i = 0; i < s.length; i++) {
        if (s[i] !== keys[i]) {
          same = false;
          break;
        }
      }
      if (same) return last;
    }
  }
  const id = JSON.stringify(keys);
  let shape = node.shapeIndex.get(id);
  if (shape === undefined) {
    for (const k of keys) assertWellFormed(k);
    shape = node.shapes.length;
    node.shapes.push(keys);
    node.shapeIndex.set(id, shape);
  }
  node.lastShape = shape;
  return shape;
}

/**
 * Node column body:
 *   kinds <u8 bit set> | [kind <u8> × occurrences, when more than one kind]
 *   | [numbers] | [strings] | [booleans] | [array lengths] | [object shapes]
 */
function encodeNode(node: Node, float32: boolean): Uint8Array {
  const n = node.kinds.length;
  const w = new ByteWriter(n + 64);
  w.u8(node.kindSet);
  if ((node.kindSet & (node.kindSet - 1)) !== 0) {
    w.ensure(n);
    w.raw.set(node.kinds, w.pos);
    w.pos += n;
  }
  if (node.nums.length > 0) {
    const f = encodeFloats(node.nums, float32);
    w.u8(f.codec);
    w.uvarint(f.body.length);
    w.bytes(f.body);
  }
  if (node.strs.length > 0) encodeStrings(node.strs, w);
  if (node.bools.length > 0) writeBitmap(w, node.bools.length, (i) => node.bools[i]!);
  for (const len of node.lens) w.uvarint(len);
  if (node.kindSet & (1 << Kind.Obj)) {
    w.uvarint(node.shapes.length);
    for (const s of node.shapes) {
      w.uvarint(s.length);
      for (const k of s) w.str(k);
    }
    if (node.shapes.length > 1) for (const id of node.shapeIds) w.uvarint(id);
  }
  return w.finish();
}
