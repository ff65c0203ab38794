/**
 * Test helpers (excluded from the build). JSON cannot hold NaN, ±Infinity or -0, so numbers
 * JSON cannot write are tagged as {"$num": "NaN"} and restored by `parseExact`.
 */
const TAG = '$num';

export function stringifyExact(v: unknown, space?: number): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' ? tagNumber(x) : x), space);
}

export function parseExact<T>(s: string): T {
  return JSON.parse(s, (_k, x: unknown) => {
    if (x && typeof x === 'object' && !Array.isArray(x)) {
      const keys = Object.keys(x);
      if (keys.length === 1 && keys[0] === TAG) return Number((x as Record<string, string>)[TAG]);
    }
    return x;
  }) as T;
}

function tagNumber(x: number): unknown {
  if (Object.is(x, -0)) return { [TAG]: '-0' };
  if (!Number.isFinite(x)) return { [TAG]: String(x) };
  return x;
}

/** A canonical string for deep equality that tells -0 from 0 and ignores object key order. */
export function canon(v: unknown): string {
  if (typeof v === 'number') return Object.is(v, -0) ? 'n:-0' : `n:${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canon(o[k])}`).join(',')}}`;
  }
  return `?${typeof v}`;
}

/** As canon, but object key order counts: equal strings mean JSON.stringify-equal and Object.is-equal numbers. */
export function ordered(v: unknown): string {
  if (typeof v === 'number') return Object.is(v, -0) ? 'n:-0' : `n:${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(ordered).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).map((k) => `${JSON.stringify(k)}:${ordered(o[k])}`).join(',')}}`;
  }
  return `?${typeof v}`;
}
