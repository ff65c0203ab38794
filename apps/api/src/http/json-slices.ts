/**
 * A large write body, `{"series":[…]}` and/or `{"samples":[…]}`, parsed a piece at a time: one
 * JSON.parse of a 4 MB body (40,000 series) held the HTTP thread for 60–250 ms, longer than any
 * health check may wait. The text is scanned for the commas between the arrays' elements, each
 * piece of about `pieceChars` is parsed on its own, and the caller gets a turn between pieces.
 *
 * Only that simple shape is taken: anything else (another key, a key twice, a key with an
 * escape, a piece that does not parse) returns null and the caller parses the whole text as
 * before, so every answer, error messages included, is JSON.parse's. The values are JSON.parse's
 * too: each element is parsed by it, only the array around them is assembled here.
 */
export function* parseWriteBodySlices(text: string, pieceChars: number): Generator<void, Record<string, unknown[]> | null> {
  const n = text.length;
  let i = 0;
  const skip = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
  };
  skip();
  if (text.charCodeAt(i) !== 0x7b) return null;
  i++;
  const out = new Map<string, unknown[]>();
  for (;;) {
    skip();
    if (text.charCodeAt(i) !== 0x22) return null;
    const close = text.indexOf('"', i + 1);
    const key = close < 0 ? '' : text.slice(i + 1, close);
    if ((key !== 'samples' && key !== 'series') || out.has(key)) return null;
    i = close + 1;
    skip();
    if (text.charCodeAt(i) !== 0x3a) return null;
    i++;
    skip();
    if (text.charCodeAt(i) !== 0x5b) return null;
    const items: unknown[] = [];
    out.set(key, items);
    i++;
    let start = i;
    let cut = false;
    let depth = 0;
    /** Parses the elements in [start, end); false when they are not a piece of a valid array. */
    const piece = (end: number, cutAfter: boolean): boolean => {
      let got: unknown;
      try {
        got = JSON.parse(`[${text.slice(start, end)}]`);
      } catch {
        return false;
      }
      const list = got as unknown[];
      // A comma between two pieces needs an element on each side (`[1,]` must stay an error).
      if (list.length === 0 && (cut || cutAfter)) return false;
      for (const v of list) items.push(v);
      return true;
    };
    for (;;) {
      if (i >= n) return null;
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        // A string: skip to its closing quote (escapes skip the character after them).
        i++;
        for (;;) {
          if (i >= n) return null;
          const d = text.charCodeAt(i);
          if (d === 0x22) break;
          i += d === 0x5c ? 2 : 1;
        }
      } else if (c === 0x5b || c === 0x7b) depth++;
      else if (c === 0x5d || c === 0x7d) {
        if (depth === 0) {
          if (c !== 0x5d || !piece(i, false)) return null;
          i++;
          break;
        }
        depth--;
      } else if (c === 0x2c && depth === 0 && i - start >= pieceChars) {
        if (!piece(i, true)) return null;
        cut = true;
        start = i + 1;
        yield;
      }
      i++;
    }
    skip();
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i++;
      continue;
    }
    if (c !== 0x7d) return null;
    i++;
    skip();
    if (i !== n) return null;
    break;
  }
  return Object.fromEntries(out);
}
