import type { FieldValue } from '@s4/core';
import { CorruptDataError } from '@s4/core';
import { bitAt } from '../codec/bitmap.js';
import { setOwn } from '../codec/bytes.js';
import type { NodeColumn } from './nodes.js';
import type { Selection } from './path.js';
import { MISSING } from './project.js';
import type { JsonBytes } from './json-bytes.js';
import { Kind } from './shred.js';

const WHAT = 'shredded field';
const utf8 = new TextEncoder();

interface Member {
  readonly key: string;
  /** `"key":` as JSON in UTF-8, for the text writer. */
  readonly keyJson: Uint8Array;
  /** The same as a string, for the string writer. */
  readonly keyText: string;
  /** keyJson after what precedes it where every member is written (a whole-record selection, the plan being the whole shape): `{` for the first, `,` for the others. */
  readonly lead: Uint8Array;
  readonly cursor: Cursor;
}

/**
 * A read position in one node column and in each of its selected descendants. Occurrences are
 * stored in document order, so reading values front to back visits every node's occurrences in
 * order: one counter per value kind is all the state a reader needs. Unselected members are
 * never visited, so their columns need not be decoded.
 */
/**
 * Each key's JSON texts per shape (a node's key list, which its slices and every reader share),
 * made once: a reader is made per field per block run, and encoding its keys each time was a
 * tenth of a records answer's writing.
 */
const shapeKeys = new WeakMap<readonly string[], { json: Uint8Array[]; text: string[]; lead: Uint8Array[] }>();
function keyBytes(keys: readonly string[]): { json: Uint8Array[]; text: string[]; lead: Uint8Array[] } {
  let out = shapeKeys.get(keys);
  if (!out) {
    const text = keys.map((key) => `${JSON.stringify(key)}:`);
    out = { json: text.map((t) => utf8.encode(t)), text, lead: text.map((t, j) => utf8.encode(`${j === 0 ? '{' : ','}${t}`)) };
    shapeKeys.set(keys, out);
  }
  return out;
}

class Cursor {
  k = 0;
  n = 0;
  s = 0;
  b = 0;
  a = 0;
  o = 0;
  readonly all: boolean;
  readonly elem: Cursor | null;
  /** Per shape: its selected members, in the object's key order. */
  readonly plans: Member[][];

  constructor(
    readonly node: NodeColumn,
    sel: Selection,
  ) {
    this.all = sel.all;
    this.elem = node.elem ? new Cursor(node.elem, sel) : null;
    const members = new Map<string, Cursor>();
    this.plans = node.shapes.map((keys) => {
      const plan: Member[] = [];
      const bytes = keyBytes(keys);
      for (const [j, key] of keys.entries()) {
        const s = sel.all ? sel : sel.keys.get(key);
        if (!s) continue;
        let cursor = members.get(key);
        if (!cursor) {
          const child = node.children.get(key);
          if (!child) throw new CorruptDataError(WHAT, `column ${node.path} has objects with key ${JSON.stringify(key)} but no column for it`);
          members.set(key, (cursor = new Cursor(child, s)));
        }
        plan.push({ key, keyJson: bytes.json[j]!, keyText: bytes.text[j]!, lead: bytes.lead[j]!, cursor });
      }
      return plan;
    });
  }

  /** The JSON texts of the column's numbers where they rarely repeat (coldTexts), null where they do; undefined until the first. */
  private cold: ColdTexts | null | undefined = undefined;

  /** Writes the next number (JsonBytes.number's text). */
  num(out: JsonBytes): void {
    const i = this.n++;
    const t = this.cold === undefined ? (this.cold = coldTexts(this.node.nums)) : this.cold;
    if (t === null) out.numberAt(this.node.nums, i);
    else out.range(t.bytes, i === 0 ? 1 : t.ends[i - 1]! + 1, t.ends[i]!);
  }

  kind(): number {
    const node = this.node;
    return node.kinds ? node.kinds[this.k++]! : node.kind;
  }

  element(): Cursor {
    if (!this.elem) throw new CorruptDataError(WHAT, `column ${this.node.path} has arrays with elements but no element column`);
    return this.elem;
  }
}


interface ColdTexts {
  /** JSON.stringify of the numbers as an array, in UTF-8 (ASCII). */
  readonly bytes: Uint8Array;
  /** Where each number's text ends (at the comma or bracket after it). */
  readonly ends: Uint32Array;
}

/**
 * All of a column's number texts from one JSON.stringify, where its numbers rarely repeat
 * (positions, IMU readings), else null: JsonBytes keeps repeating doubles' texts, but a double
 * seen once costs it a String() (~0.3 µs, most of a records answer) and a table slot, while the
 * native serializer formats a whole array for about two thirds of that. Decided on a probe.
 */
function coldTexts(nums: Float64Array): ColdTexts | null {
  if (nums.length < COLD_MIN) return null;
  const seen = new Set<number>();
  for (let i = 0; i < COLD_PROBE; i++) {
    const v = nums[i]!;
    if (Math.floor(v) !== v) seen.add(v);
  }
  if (seen.size < COLD_PROBE - COLD_PROBE / 8) return null;
  const bytes = utf8.encode(JSON.stringify(Array.from(nums)));
  const ends = new Uint32Array(nums.length);
  let k = 0;
  for (let p = 1; p < bytes.length; p++) if (bytes[p] === 0x2c || bytes[p] === 0x5d) ends[k++] = p;
  if (k !== nums.length) throw new CorruptDataError(WHAT, `${k} number texts for ${nums.length} numbers`);
  return { bytes, ends };
}
/** Columns shorter than this are formatted value by value (the probe and the array would cost more). */
const COLD_MIN = 64;
const COLD_PROBE = 32;


function take(c: Cursor): FieldValue | typeof MISSING {
  const node = c.node;
  switch (c.kind()) {
    case Kind.Null:
      return c.all ? null : MISSING;
    case Kind.Bool: {
      const v = bitAt(node.bools, c.b++);
      return c.all ? v : MISSING;
    }
    case Kind.Num: {
      const v = node.nums[c.n++]!;
      return c.all ? v : MISSING;
    }
    case Kind.Str: {
      const v = node.strs[c.s++]!;
      return c.all ? v : MISSING;
    }
    case Kind.Arr: {
      const len = node.lens[c.a++]!;
      const out: FieldValue[] = [];
      if (len > 0) {
        const e = c.element();
        for (let j = 0; j < len; j++) {
          const x = take(e);
          if (x !== MISSING) out.push(x);
        }
      }
      return out;
    }
    case Kind.Obj: {
      const plan = c.plans[node.shapeIds ? node.shapeIds[c.o++]! : 0]!;
      const out: Record<string, FieldValue> = {};
      for (const m of plan) {
        const x = take(m.cursor);
        if (x !== MISSING) setOwn(out, m.key, x);
      }
      return out;
    }
    default:
      throw new CorruptDataError(WHAT, `column ${node.path}: unknown kind`);
  }
}

/**
 * One value per sample, rebuilt from a root node column and the columns below it that `sel`
 * needs (projected as projectValue would; a sample without the field, or without any selected
 * path, is null).
 */
export function assembleField(root: NodeColumn, sel: Selection): FieldValue[] {
  const c = new Cursor(root, sel);
  const out = new Array<FieldValue>(root.count);
  for (let i = 0; i < root.count; i++) {
    const x = take(c);
    out[i] = x === MISSING ? null : x;
  }
  return out;
}

/**
 * As take, but writes the value's JSON text (JSON.stringify's) into `out`. The caller has checked
 * with skips() that the occurrence is not left out.
 */
function write(c: Cursor, out: JsonBytes): void {
  const node = c.node;
  switch (c.kind()) {
    case Kind.Null:
      out.ascii('null');
      return;
    case Kind.Bool:
      out.ascii(bitAt(node.bools, c.b++) ? 'true' : 'false');
      return;
    case Kind.Num:
      c.num(out);
      return;
    case Kind.Str:
      out.string(node.strs[c.s++]!);
      return;
    case Kind.Arr: {
      const len = node.lens[c.a++]!;
      out.byte(0x5b);
      if (len > 0 && c.all) {
        // Nothing below is left out: no skip() per element.
        const e = c.element();
        write(e, out);
        for (let j = 1; j < len; j++) {
          out.byte(0x2c);
          write(e, out);
        }
      } else if (len > 0) {
        const e = c.element();
        let first = true;
        for (let j = 0; j < len; j++) {
          if (skip(e)) continue;
          if (!first) out.byte(0x2c);
          write(e, out);
          first = false;
        }
      }
      out.byte(0x5d);
      return;
    }
    case Kind.Obj: {
      const plan = c.plans[node.shapeIds ? node.shapeIds[c.o++]! : 0]!;
      if (c.all && plan.length > 0) {
        // Every member written: its lead bytes carry the brace or comma, and a number member
        // (most of a sensor record) is written here rather than through another call of write.
        for (const m of plan) {
          out.bytes(m.lead);
          const mc = m.cursor;
          if (mc.node.kind === Kind.Num) mc.num(out);
          else write(mc, out);
        }
        out.byte(0x7d);
        return;
      }
      out.byte(0x7b);
      let first = true;
      for (const m of plan) {
        if (skip(m.cursor)) continue;
        if (!first) out.byte(0x2c);
        out.bytes(m.keyJson);
        write(m.cursor, out);
        first = false;
      }
      out.byte(0x7d);
      return;
    }
    default:
      throw new CorruptDataError(WHAT, `column ${node.path}: unknown kind`);
  }
}

/**
 * Whether the next occurrence is left out by the projection (a scalar or null of a projected
 * node: only the objects and arrays above the selected paths stay), and if so steps over it.
 */
function skip(c: Cursor): boolean {
  if (c.all) return false;
  const node = c.node;
  const kind = node.kinds ? node.kinds[c.k]! : node.kind;
  switch (kind) {
    case Kind.Null:
      break;
    case Kind.Bool:
      c.b++;
      break;
    case Kind.Num:
      c.n++;
      break;
    case Kind.Str:
      c.s++;
      break;
    default:
      return false;
  }
  if (node.kinds) c.k++;
  return true;
}

/**
 * Writes each sample's (projected) value of a shredded field as JSON text, straight from the
 * columns without building the values: `next(out)` writes the next sample's, or nothing and
 * false where assembleField's value is null (the sample lacks the field, holds null, or has none
 * of the selected paths), so that a writer can leave such samples out; a NaN is still the text
 * "null", as JSON.stringify writes it.
 */
export function fieldWriter(root: NodeColumn, sel: Selection): (out: JsonBytes, prefix: Uint8Array) => boolean {
  const c = new Cursor(root, sel);
  return (out, prefix) => {
    const kind = root.kinds ? root.kinds[c.k] : root.kind;
    if (kind === Kind.Null) {
      c.k++;
      return false;
    }
    if (skip(c)) return false;
    out.bytes(prefix);
    write(c, out);
    return true;
  };
}
