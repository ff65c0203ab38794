import { readBitmap } from '../codec/bitmap.js';
import { ByteReader } from '../codec/bytes.js';
import { decodeFloat64s, FloatCodec } from '../codec/floats.js';
import { decodeStrings } from '../codec/strings.js';
import { Kind, KIND_BITS } from './shred.js';

const EMPTY_NUMS = new Float64Array(0);

/** More occurrences than this at one path is corruption, not data (a block is one series-window). */
const MAX_OCCURRENCES = 1 << 28;

/**
 * One decoded node column: the kind of each occurrence and the values of each kind, in
 * occurrence order. Shared read-only (decoded blocks are cached); readers walk it with their own
 * cursors (assemble.ts). `elem` and `children` hold only the nodes that were decoded.
 */
export interface NodeColumn {
  readonly path: string;
  /** Occurrences of the path: samples for a root, elements or objects having the key below it. */
  readonly count: number;
  /** The kind of every occurrence when there is one; -1 when `kinds` lists them. */
  readonly kind: Kind | -1;
  readonly kinds: Uint8Array | null;
  /** Typed arrays, so that a cached block is compact and a slice or the wire shares them without a copy. */
  readonly nums: Float64Array;
  readonly strs: readonly string[];
  /** bitmap(#booleans), bit set = true. */
  readonly bools: Uint8Array;
  /** Length of each array occurrence. */
  readonly lens: Uint32Array;
  /** Key sequences of the objects, first-seen order; shapeIds (or shape 0) says whose is whose. */
  readonly shapes: readonly (readonly string[])[];
  readonly shapeIds: Uint32Array | null;
  /** Elements of the arrays, all together (count = the sum of `lens`). */
  elem: NodeColumn | null;
  /** Member columns by key (count = objects whose shape has the key). */
  readonly children: Map<string, NodeColumn>;
}

/** Decodes one node column body holding `count` occurrences (its children are decoded separately). */
export function decodeNode(r: ByteReader, path: string, count: number): NodeColumn {
  const kindSet = r.u8();
  if ((kindSet & ~KIND_BITS) !== 0) r.fail(`column ${path}: unknown kinds ${kindSet}`);
  if ((kindSet === 0) !== (count === 0)) r.fail(`column ${path}: kinds ${kindSet} for ${count} occurrences`);
  const perKind = [0, 0, 0, 0, 0, 0];
  let kind: Kind | -1 = -1;
  let kinds: Uint8Array | null = null;
  if ((kindSet & (kindSet - 1)) === 0) {
    if (count > 0) {
      kind = (31 - Math.clz32(kindSet)) as Kind;
      perKind[kind] = count;
    }
  } else {
    kinds = r.bytes(count);
    for (let i = 0; i < count; i++) {
      const k = kinds[i]!;
      if (k > Kind.Obj || !((kindSet >>> k) & 1)) r.fail(`column ${path}: kind ${k} outside its kind set ${kindSet}`);
      perKind[k]!++;
    }
    for (let k = 0; k <= Kind.Obj; k++) if ((kindSet >>> k) & 1 && perKind[k] === 0) r.fail(`column ${path}: kind ${k} listed but unused`);
  }
  let nums: Float64Array = EMPTY_NUMS;
  if (perKind[Kind.Num]! > 0) {
    const codec = r.u8();
    if (codec !== FloatCodec.Gorilla && codec !== FloatCodec.Decimal && codec !== FloatCodec.Decimal32) r.fail(`column ${path}: unknown float codec ${codec}`);
    const len = r.uvarint();
    r.need(len);
    const sub = new ByteReader(r.buf, r.what, r.pos, r.pos + len);
    nums = decodeFloat64s(codec, sub, sub.end, perKind[Kind.Num]!);
    sub.done();
    r.pos += len;
  }
  const strs = perKind[Kind.Str]! > 0 ? decodeStrings(r, perKind[Kind.Str]!) : [];
  const bools = perKind[Kind.Bool]! > 0 ? readBitmap(r, perKind[Kind.Bool]!) : new Uint8Array(0);
  const nArr = perKind[Kind.Arr]!;
  const lens = new Uint32Array(nArr);
  let elems = 0;
  for (let i = 0; i < nArr; i++) {
    const len = r.uvarint();
    lens[i] = len;
    elems += len;
  }
  if (elems > MAX_OCCURRENCES) r.fail(`column ${path}: ${elems} array elements is implausible`);
  const shapes: string[][] = [];
  let shapeIds: Uint32Array | null = null;
  const nObj = perKind[Kind.Obj]!;
  if (nObj > 0) {
    const nShapes = r.count();
    if (nShapes === 0 || nShapes > nObj) r.fail(`column ${path}: ${nShapes} shapes for ${nObj} objects`);
    for (let s = 0; s < nShapes; s++) {
      const nKeys = r.count();
      const keys: string[] = [];
      const seen = new Set<string>();
      for (let k = 0; k < nKeys; k++) {
        const key = r.str();
        if (seen.has(key)) r.fail(`column ${path}: key ${JSON.stringify(key)} twice in one shape`);
        seen.add(key);
        keys.push(key);
      }
      shapes.push(keys);
    }
    if (nShapes > 1) {
      shapeIds = new Uint32Array(nObj);
      for (let i = 0; i < nObj; i++) {
        const id = r.uvarint();
        if (id >= nShapes) r.fail(`column ${path}: shape ${id} outside ${nShapes}`);
        shapeIds[i] = id;
      }
    }
  }
  return { path, count, kind, kinds, nums, strs, bools, lens, shapes, shapeIds, elem: null, children: new Map() };
}

/** Occurrences of the element column: the sum of the array lengths. */
export function elementCount(node: NodeColumn): number {
  let n = 0;
  for (const len of node.lens) n += len;
  return n;
}

/** Occurrences of each member column: how many objects have the key. Keys in first-seen order. */
export function memberCounts(node: NodeColumn): Map<string, number> {
  const perShape = new Array<number>(node.shapes.length).fill(0);
  if (node.shapeIds) for (const id of node.shapeIds) perShape[id]!++;
  else if (node.shapes.length === 1) perShape[0] = node.kinds ? countKind(node.kinds, Kind.Obj) : node.count;
  const out = new Map<string, number>();
  node.shapes.forEach((keys, s) => {
    for (const k of keys) out.set(k, (out.get(k) ?? 0) + perShape[s]!);
  });
  return out;
}

function countKind(kinds: Uint8Array, k: Kind): number {
  let n = 0;
  for (let i = 0; i < kinds.length; i++) if (kinds[i] === k) n++;
  return n;
}
