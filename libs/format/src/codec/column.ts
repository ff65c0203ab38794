import type { FieldValue } from '@s4/core';
import { msgpack } from '../msgpack.js';
import { bitAt, popcount, readBitmap, writeBitmap } from './bitmap.js';
import { ByteReader, ByteWriter } from './bytes.js';
import { decodeFloats, encodeFloats, FloatCodec } from './floats.js';
import { decodeStrings, encodeStrings } from './strings.js';
import { assertWellFormed, needsExact, readValue, writeValue } from './values.js';

/** Column encodings; the byte after a column's name. Never renumber: they are on disk. */
export const Enc = {
  Absent: 0,
  Gorilla: 1,
  Decimal: 2,
  Bool: 3,
  String: 4,
  MsgPack: 5,
  Exact: 6,
  /** Float32 decimals (segment version 4 and later). */
  Decimal32: 7,
} as const;
export type Enc = (typeof Enc)[keyof typeof Enc];

export const FLAG_PRESENCE = 1;

const K_NUM = 1;
const K_BOOL = 2;
const K_STR = 4;
const K_OTHER = 8;

/**
 * Writes one field column: name str | encoding u8 | flags u8 | body length uvarint | body.
 * The body is an optional presence bitmap (flag bit 0) followed by the present values only.
 */
export function encodeColumn(w: ByteWriter, name: string, col: readonly FieldValue[]): void {
  assertWellFormed(name);
  w.str(name);
  encodeColumnBody(w, col);
}

// The body before its length is known; reused by every call (copied into `w` before it returns).
const scratch = new ByteWriter(4096);

/** A field column without its name (segment v2 keeps names in the footer): encoding u8 | flags u8 | body length uvarint | body. */
export function encodeColumnBody(w: ByteWriter, col: readonly FieldValue[], float32 = false): void {
  const n = col.length;
  let kinds = 0;
  let present = 0;
  for (let i = 0; i < n; i++) {
    const v = col[i];
    if (v === null || v === undefined) continue;
    present++;
    const t = typeof v;
    kinds |= t === 'number' ? K_NUM : t === 'boolean' ? K_BOOL : t === 'string' ? K_STR : K_OTHER;
  }
  const dense: FieldValue[] = present === n ? (col as FieldValue[]) : [];
  if (present !== n) for (let i = 0; i < n; i++) if (col[i] !== null && col[i] !== undefined) dense.push(col[i]!);

  const body = scratch.reset();
  if (present > 0 && present < n) writeBitmap(body, n, (i) => col[i] !== null && col[i] !== undefined);
  let enc: Enc;
  if (present === 0) enc = Enc.Absent;
  else if (kinds === K_NUM) {
    const f = encodeFloats(dense as number[], float32);
    enc = f.codec === FloatCodec.Decimal ? Enc.Decimal : f.codec === FloatCodec.Decimal32 ? Enc.Decimal32 : Enc.Gorilla;
    body.bytes(f.body);
  } else if (kinds === K_BOOL) {
    enc = Enc.Bool;
    writeBitmap(body, dense.length, (i) => dense[i] === true);
  } else if (kinds === K_STR) {
    for (const s of dense as string[]) assertWellFormed(s);
    enc = Enc.String;
    encodeStrings(dense as string[], body);
  } else {
    let exact = false;
    for (const v of dense) if (needsExact(v)) exact = true;
    if (exact) {
      enc = Enc.Exact;
      for (const v of dense) writeValue(body, v);
    } else {
      enc = Enc.MsgPack;
      body.bytes(msgpack.pack(dense));
    }
  }
  w.u8(enc);
  w.u8(present > 0 && present < n ? FLAG_PRESENCE : 0);
  w.uvarint(body.pos);
  w.bytes(body.written());
}

export interface DecodedColumn {
  name: string;
  values: FieldValue[];
}

export function decodeColumn(r: ByteReader, n: number): DecodedColumn {
  const name = r.str();
  return { name, values: decodeColumnBody(r, n, name) };
}

/** Reads what encodeColumnBody wrote; `name` is for error messages. */
export function decodeColumnBody(r: ByteReader, n: number, name: string): FieldValue[] {
  const enc = r.u8();
  const flags = r.u8();
  const len = r.uvarint();
  r.need(len);
  const end = r.pos + len;
  const body = new ByteReader(r.buf, r.what, r.pos, end);
  r.pos = end;
  if ((flags & ~FLAG_PRESENCE) !== 0) body.fail(`column ${name}: unknown flags ${flags}`);
  const presence = flags & FLAG_PRESENCE ? readBitmap(body, n) : null;
  const present = presence ? popcount(presence) : enc === Enc.Absent ? 0 : n;
  let dense: FieldValue[];
  switch (enc) {
    case Enc.Absent:
      if (presence) body.fail(`column ${name}: absent column with a presence bitmap`);
      dense = [];
      break;
    case Enc.Gorilla:
    case Enc.Decimal:
    case Enc.Decimal32:
      dense = decodeFloats(enc === Enc.Decimal ? FloatCodec.Decimal : enc === Enc.Decimal32 ? FloatCodec.Decimal32 : FloatCodec.Gorilla, body, end, present);
      break;
    case Enc.Bool: {
      const bits = readBitmap(body, present);
      dense = new Array<boolean>(present);
      for (let i = 0; i < present; i++) dense[i] = bitAt(bits, i);
      break;
    }
    case Enc.String:
      dense = decodeStrings(body, present);
      break;
    case Enc.MsgPack:
      dense = unpackColumn(body, name, end, present);
      break;
    case Enc.Exact:
      dense = [];
      for (let i = 0; i < present; i++) dense.push(readValue(body));
      break;
    default:
      return body.fail(`column ${name}: unknown encoding ${enc}`);
  }
  body.done();
  if (enc === Enc.Absent) return new Array<FieldValue>(n).fill(null);
  if (!presence) return dense;
  const values = new Array<FieldValue>(n);
  let j = 0;
  for (let i = 0; i < n; i++) values[i] = bitAt(presence, i) ? dense[j++]! : null;
  return values;
}

function unpackColumn(body: ByteReader, name: string, end: number, present: number): FieldValue[] {
  let out: unknown;
  try {
    out = msgpack.unpack(body.bytes(end - body.pos));
  } catch (err) {
    return body.fail(`column ${name}: msgpack: ${(err as Error).message}`);
  }
  if (!Array.isArray(out) || out.length !== present) body.fail(`column ${name}: msgpack body is not an array of ${present} values`);
  return out as FieldValue[];
}
