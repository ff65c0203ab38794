/**
 * The keys of the maps a value packer is inside (JsonValuePacker, MsgpackValuePacker), as places in
 * the body's bytes: a key is taken only when a decode to a JS object keeps it where it stands. An
 * integer-like key would be listed first by the object, `__proto__` would set its prototype, and
 * of a key twice only the last value stays: the packers leave such values to the general path.
 */
export class MapKeys {
  private at = new Int32Array(64);
  private len = new Int32Array(64);
  /** Keys held: a map's start from `count` on, given back to `release` at its end. */
  count = 0;

  /** Whether the key b[start, start + len) is new in the map whose keys start at `first`, and plain (see the class); holds it if so. */
  add(b: Uint8Array, start: number, len: number, first: number): boolean {
    if (start + len > b.length) return false;
    const c = b[start]!;
    if (len > 0 && c >= 0x30 && c <= 0x39) {
      let k = start + 1;
      while (k < start + len && b[k]! >= 0x30 && b[k]! <= 0x39) k++;
      if (k === start + len) return false;
    }
    if (len === 9 && isProto(b, start)) return false;
    for (let k = first; k < this.count; k++) {
      if (this.len[k] !== len) continue;
      const at = this.at[k]!;
      let j = 0;
      while (j < len && b[at + j] === b[start + j]) j++;
      if (j === len) return false;
    }
    if (this.count === this.at.length) {
      const at = new Int32Array(this.count * 2);
      at.set(this.at);
      this.at = at;
      const lens = new Int32Array(this.count * 2);
      lens.set(this.len);
      this.len = lens;
    }
    this.at[this.count] = start;
    this.len[this.count++] = len;
    return true;
  }
}

const PROTO = [0x5f, 0x5f, 0x70, 0x72, 0x6f, 0x74, 0x6f, 0x5f, 0x5f]; // "__proto__"

/** Whether b[at, at + 9) spells `__proto__`. */
export function isProto(b: Uint8Array, at: number): boolean {
  for (let k = 0; k < 9; k++) if (b[at + k] !== PROTO[k]) return false;
  return true;
}
