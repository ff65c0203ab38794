import type { FieldValue } from '@s4/core';
import type { ByteReader, ByteWriter } from './bytes.js';
import { setOwn } from './bytes.js';

/**
 * Exact encoding of arbitrary JSON values, for the nested/mixed columns MessagePack cannot carry
 * faithfully: the pinned msgpackr writes -0 as the integer 0 and renames a `__proto__` key to
 * `__proto_` when decoding. One tag byte per value:
 * 0 null, 1 false, 2 true, 3 float64, 4 integer (svarint), 5 string, 6 array, 7 object.
 */
const T_NULL = 0;
const T_FALSE = 1;
const T_TRUE = 2;
const T_F64 = 3;
const T_INT = 4;
const T_STR = 5;
const T_ARR = 6;
const T_OBJ = 7;
const MAX_DEPTH = 1000;

/**
 * Checks that `v` is a JSON value S4 can store and says whether MessagePack would alter it.
 * Throws on values that are not JSON (undefined, Date, Map, ...) or hold ill-formed UTF-16,
 * which no UTF-8 encoding can carry.
 */
export function needsExact(v: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) throw new RangeError(`nested value deeper than ${MAX_DEPTH}`);
  switch (typeof v) {
    case 'number':
      return v === 0 && 1 / v < 0;
    case 'boolean':
      return false;
    case 'string':
      assertWellFormed(v);
      return false;
    case 'object': {
      if (v === null) return false;
      let exact = false;
      if (Array.isArray(v)) {
        for (const x of v) if (needsExact(x, depth + 1)) exact = true;
        return exact;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) throw new RangeError('field value is not a JSON value (non-plain object)');
      for (const k of Object.keys(v)) {
        assertWellFormed(k);
        if (k === '__proto__') exact = true;
        if (needsExact((v as Record<string, unknown>)[k], depth + 1)) exact = true;
      }
      return exact;
    }
    default:
      throw new RangeError(`field value of type ${typeof v} is not a JSON value`);
  }
}

export function assertWellFormed(s: string): void {
  if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    throw new RangeError(`string ${JSON.stringify(s.slice(0, 40))} holds a lone surrogate, which UTF-8 cannot store`);
  }
}

export function writeValue(w: ByteWriter, v: FieldValue): void {
  if (v === null) w.u8(T_NULL);
  else if (v === false) w.u8(T_FALSE);
  else if (v === true) w.u8(T_TRUE);
  else if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && !Object.is(v, -0)) {
      w.u8(T_INT);
      w.svarint(v);
    } else {
      w.u8(T_F64);
      w.f64(v);
    }
  } else if (typeof v === 'string') {
    w.u8(T_STR);
    w.str(v);
  } else if (Array.isArray(v)) {
    w.u8(T_ARR);
    w.uvarint(v.length);
    for (const x of v) writeValue(w, x);
  } else {
    const keys = Object.keys(v);
    w.u8(T_OBJ);
    w.uvarint(keys.length);
    for (const k of keys) {
      w.str(k);
      writeValue(w, v[k]!);
    }
  }
}

export function readValue(r: ByteReader, depth = 0): FieldValue {
  if (depth > MAX_DEPTH) r.fail(`value nested deeper than ${MAX_DEPTH}`);
  const tag = r.u8();
  switch (tag) {
    case T_NULL:
      return null;
    case T_FALSE:
      return false;
    case T_TRUE:
      return true;
    case T_F64:
      return r.f64();
    case T_INT:
      return r.svarint();
    case T_STR:
      return r.str();
    case T_ARR: {
      const n = r.count();
      const out: FieldValue[] = [];
      for (let i = 0; i < n; i++) out.push(readValue(r, depth + 1));
      return out;
    }
    case T_OBJ: {
      const n = r.count(2);
      const out: Record<string, FieldValue> = {};
      for (let i = 0; i < n; i++) {
        const k = r.str();
        setOwn(out, k, readValue(r, depth + 1));
      }
      return out;
    }
    default:
      return r.fail(`unknown value tag ${tag}`);
  }
}
