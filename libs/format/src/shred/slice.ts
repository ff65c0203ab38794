import type { NodeColumn } from './nodes.js';
import { Kind } from './shred.js';

/**
 * The occurrences [lo, hi) of a node column and everything below them, as a node column of its
 * own (typed arrays are viewed, not copied; nothing is decoded again): what a reader streams when a query
 * range covers part of a block. Children that were not decoded stay absent.
 */
export function sliceNode(node: NodeColumn, lo: number, hi: number): NodeColumn {
  if (lo === 0 && hi === node.count) return node;
  const before = [0, 0, 0, 0, 0, 0];
  const inside = [0, 0, 0, 0, 0, 0];
  if (node.kinds) {
    for (let i = 0; i < lo; i++) before[node.kinds[i]!]!++;
    for (let i = lo; i < hi; i++) inside[node.kinds[i]!]!++;
  } else if (node.kind >= 0) {
    before[node.kind] = lo;
    inside[node.kind] = hi - lo;
  }
  const nums = node.nums.subarray(before[Kind.Num], before[Kind.Num]! + inside[Kind.Num]!);
  const strs = node.strs.slice(before[Kind.Str], before[Kind.Str]! + inside[Kind.Str]!);
  const bools = sliceBits(node.bools, before[Kind.Bool]!, inside[Kind.Bool]!);
  const a0 = before[Kind.Arr]!;
  const lens = node.lens.subarray(a0, a0 + inside[Kind.Arr]!);
  let elem: NodeColumn | null = null;
  if (node.elem) {
    let e0 = 0;
    for (let i = 0; i < a0; i++) e0 += node.lens[i]!;
    let n = 0;
    for (const len of lens) n += len;
    elem = sliceNode(node.elem, e0, e0 + n);
  }
  const o0 = before[Kind.Obj]!;
  const nObj = inside[Kind.Obj]!;
  const shapeIds = node.shapeIds ? node.shapeIds.subarray(o0, o0 + nObj) : null;
  const children = new Map<string, NodeColumn>();
  if (node.children.size > 0) {
    // A member's occurrences are the objects having its key, in order: count them before and inside.
    const perShape = (from: number, to: number) => {
      const counts = new Array<number>(node.shapes.length).fill(0);
      if (node.shapeIds) for (let i = from; i < to; i++) counts[node.shapeIds[i]!]!++;
      else counts[0] = to - from;
      return counts;
    };
    const pre = perShape(0, o0);
    const mid = perShape(o0, o0 + nObj);
    for (const [key, child] of node.children) {
      let start = 0;
      let n = 0;
      node.shapes.forEach((keys, s) => {
        if (keys.includes(key)) {
          start += pre[s]!;
          n += mid[s]!;
        }
      });
      children.set(key, sliceNode(child, start, start + n));
    }
  }
  return {
    path: node.path,
    count: hi - lo,
    kind: node.kind,
    kinds: node.kinds ? node.kinds.subarray(lo, hi) : null,
    nums,
    strs,
    bools,
    lens,
    shapes: node.shapes,
    shapeIds,
    elem,
    children,
  };
}

function sliceBits(bits: Uint8Array, from: number, n: number): Uint8Array {
  if ((from & 7) === 0) return bits.subarray(from >>> 3, (from + n + 7) >>> 3);
  const out = new Uint8Array((n + 7) >>> 3);
  for (let i = 0; i < n; i++) {
    const j = from + i;
    if ((bits[j >>> 3]! >>> (j & 7)) & 1) out[i >>> 3]! |= 1 << (i & 7);
  }
  return out;
}
