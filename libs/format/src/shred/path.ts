/**
 * Two path grammars:
 *
 * - Column paths name the shredded columns of a block (segment.md, "Shredded fields"): the
 *   escaped field name, then `.key` for an object member and `[]` for the elements of an array,
 *   e.g. `sats[].prn`. Keys escape `\`, `.`, `[` and `]` with a backslash, so every key (and
 *   every field name) maps to exactly one path and back.
 * - Projection paths are what a query asks for (`fields=imu.vibration,sats.prn`): keys separated
 *   by `.`, array steps implicit; `\.` is a dot inside a key and `\\` a backslash.
 */

export function escapeKey(key: string): string {
  return /[\\.[\]]/.test(key) ? key.replace(/[\\.[\]]/g, (c) => `\\${c}`) : key;
}

export const childPath = (parent: string, key: string): string => `${parent}.${escapeKey(key)}`;
export const elementPath = (parent: string): string => `${parent}[]`;

/** A column path's steps: the field name, then a key per object step and null per array step. */
export function parseColumnPath(path: string): [string, ...(string | null)[]] {
  const steps: (string | null)[] = [];
  let cur = '';
  let inKey = true;
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '\\') {
      if (i + 1 >= path.length) throw new RangeError(`column path ${JSON.stringify(path)} ends in a lone backslash`);
      cur += path[++i];
    } else if (c === '.') {
      if (inKey) steps.push(cur);
      cur = '';
      inKey = true;
    } else if (c === '[') {
      if (path[i + 1] !== ']') throw new RangeError(`column path ${JSON.stringify(path)}: unescaped "[" not followed by "]"`);
      if (inKey) steps.push(cur);
      steps.push(null);
      cur = '';
      inKey = false;
      i++;
    } else if (c === ']') {
      throw new RangeError(`column path ${JSON.stringify(path)}: unescaped "]"`);
    } else {
      if (!inKey) throw new RangeError(`column path ${JSON.stringify(path)}: "${c}" after "[]" without a "."`);
      cur += c;
    }
  }
  if (inKey) steps.push(cur);
  if (steps.length === 0 || steps[0] === null) throw new RangeError(`column path ${JSON.stringify(path)} does not start with a field name`);
  return steps as [string, ...(string | null)[]];
}

/** The field a column path belongs to, and whether the path is that field's root. */
export function rootOf(path: string): { field: string; isRoot: boolean } {
  const steps = parseColumnPath(path);
  return { field: steps[0], isRoot: steps.length === 1 };
}

/** Splits a projection path into keys (`a.b\.c` → `a`, `b.c`). */
export function parseProjectionPath(path: string): string[] {
  const keys: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '\\' && i + 1 < path.length) cur += path[++i];
    else if (c === '.') {
      keys.push(cur);
      cur = '';
    } else cur += c;
  }
  keys.push(cur);
  return keys;
}

/** The projection path of a key sequence (inverse of parseProjectionPath). */
export function formatProjectionPath(keys: readonly string[]): string {
  return keys.map((k) => k.replace(/[\\.]/g, (c) => `\\${c}`)).join('.');
}

/**
 * Which parts of each field a projection keeps. `all` keeps the whole value; otherwise only
 * the listed keys of objects (at any array depth) are kept, each with its own selection.
 */
export interface Selection {
  all: boolean;
  keys: Map<string, Selection>;
}

const ALL: Selection = Object.freeze({ all: true, keys: new Map<string, Selection>() });
export const selectAll = (): Selection => ALL;

/**
 * Builds per-field selections from projection paths. A path equal to the name of one of
 * `fieldNames` selects that whole field even if it holds dots (so `fields=cpu.user` keeps
 * meaning the field `cpu.user` where one exists); otherwise its first key names the field.
 * A path that selects a whole value wins over deeper paths into it.
 */
export function selectPaths(paths: readonly string[], fieldNames?: ReadonlySet<string>): Map<string, Selection> {
  const out = new Map<string, Selection>();
  for (const p of paths) {
    const keys = fieldNames?.has(p) ? [p] : parseProjectionPath(p);
    let sel = out.get(keys[0]!);
    if (keys.length === 1) {
      out.set(keys[0]!, ALL);
      continue;
    }
    if (!sel) out.set(keys[0]!, (sel = { all: false, keys: new Map() }));
    for (let i = 1; i < keys.length && !sel.all; i++) {
      const k = keys[i]!;
      if (i === keys.length - 1) {
        sel.keys.set(k, ALL);
        break;
      }
      let next = sel.keys.get(k);
      if (!next) sel.keys.set(k, (next = { all: false, keys: new Map() }));
      sel = next;
    }
  }
  return out;
}
