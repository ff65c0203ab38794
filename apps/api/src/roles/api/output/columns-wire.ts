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
 */
export function nodeWire(node: NodeColumn, sel: Selection | undefined): Record<string, unknown> {
  const all = sel?.all ?? true;
  const out: Record<string, unknown> = { c: node.count, k: node.kind, a: all };
  if (node.kinds) out.ks = node.kinds;
  if (all) {
    if (node.nums.length > 0) out.n = node.nums;
    if (node.strs.length > 0) out.s = node.strs;
    if (node.bools.length > 0) out.b = node.bools;
  }
  if (node.lens.length > 0) out.l = node.lens;
  if (node.shapes.length > 0) out.h = node.shapes;
  if (node.shapeIds) out.i = node.shapeIds;
  if (node.elem) out.e = nodeWire(node.elem, sel);
  const members: unknown[] = [];
  for (const [key, child] of node.children) {
    const s = all ? sel : sel?.keys.get(key);
    if (all || s) members.push(key, nodeWire(child, s));
  }
  if (members.length > 0) out.m = members;
  return out;
}
