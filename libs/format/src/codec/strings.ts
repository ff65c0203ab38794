import type { ByteReader, ByteWriter } from './bytes.js';

/** Dictionary in first-seen order, then one uvarint index per value. */
export function encodeStrings(values: readonly string[], w: ByteWriter): void {
  const dict = new Map<string, number>();
  const idx = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    const s = values[i]!;
    let id = dict.get(s);
    if (id === undefined) {
      id = dict.size;
      dict.set(s, id);
    }
    idx[i] = id;
  }
  w.uvarint(dict.size);
  for (const s of dict.keys()) w.str(s);
  for (let i = 0; i < idx.length; i++) w.uvarint(idx[i]!);
}

export function decodeStrings(r: ByteReader, n: number): string[] {
  const size = r.count();
  const dict: string[] = [];
  for (let i = 0; i < size; i++) dict.push(r.str());
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const id = r.uvarint();
    if (id >= size) r.fail(`string index ${id} outside a dictionary of ${size}`);
    out[i] = dict[id]!;
  }
  return out;
}
