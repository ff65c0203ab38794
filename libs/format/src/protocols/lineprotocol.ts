import { nameMap, type FieldValue, type Sample } from '@s4/core';

/** Units of line-protocol timestamps (Influx's `precision` parameter; m and h are 1.x's). */
export type Precision = 'ns' | 'us' | 'ms' | 's' | 'm' | 'h';
export const PRECISIONS: readonly Precision[] = ['ns', 'us', 'ms', 's', 'm', 'h'];

/** Where a line-protocol text is wrong: 1-based line and column (in UTF-16 code units of that line). */
export interface LineIssue {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export class LineProtocolError extends Error {
  constructor(readonly issue: LineIssue) {
    super(`line ${issue.line}, column ${issue.column}: ${issue.message}`);
    this.name = 'LineProtocolError';
  }
}

export interface LineProtocolOptions {
  readonly precision: Precision;
  /** The time of a point that has no timestamp, ms. */
  readonly now: number;
  /** The line number of the text's first line (a caller that feeds lines one at a time says which). */
  readonly firstLine?: number;
  /** Stop collecting issues after this many (default 100). */
  readonly maxIssues?: number;
  /**
   * Group points into `series` (columns per series) instead of `samples`: no object per line,
   * what the server's columnar write path takes.
   */
  readonly columns?: boolean;
}

export interface ParsedPoints {
  readonly samples: Sample[];
  /** The line each sample came from, same order. */
  readonly lines: number[];
  /** The text of each sample's measurement and tags as written: equal texts, same series. */
  readonly keys: string[];
  /** With `columns`: the points grouped per series (and samples, lines, keys stay empty). */
  readonly series: LineSeries[];
  readonly issues: LineIssue[];
}

/** Samples of one series as columns (null where a line lacks a field), with the line of each. */
export interface LineSeries {
  readonly metric: string;
  readonly tags: Record<string, string>;
  readonly ts: number[];
  readonly fields: Record<string, FieldValue[]>;
  readonly lines: number[];
}

/**
 * Parsed points grouped into one column set per series, in first-seen order: what a
 * columnar write takes, so that validation checks columns rather than one object per line.
 * Lines writing the same series with tags in another order stay separate entries here (the
 * write path merges them by canonical series).
 */
export function toColumns(parsed: ParsedPoints): LineSeries[] {
  const byKey = new Map<string, LineSeries>();
  const { samples, lines, keys } = parsed;
  for (let k = 0; k < samples.length; k++) {
    const s = samples[k]!;
    let g = byKey.get(keys[k]!);
    if (!g) byKey.set(keys[k]!, (g = { metric: s.metric, tags: s.tags, ts: [], fields: nameMap(), lines: [] }));
    const n = g.ts.length;
    g.ts.push(s.ts);
    g.lines.push(lines[k]!);
    for (const f in s.fields) {
      let col = g.fields[f];
      if (col === undefined) g.fields[f] = col = new Array<FieldValue>(n).fill(null);
      col.push(s.fields[f]!);
    }
    for (const f in g.fields) if (g.fields[f]!.length === n) g.fields[f]!.push(null);
  }
  return [...byKey.values()];
}

const SPACE = 0x20;
const TAB = 0x09;
const COMMA = 0x2c;
const EQUALS = 0x3d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NL = 0x0a;
const CR = 0x0d;
const HASH = 0x23;

/** Digits below a millisecond (dropped: S4 stores ms) and ms per unit, by precision. */
const DROP_DIGITS: Record<Precision, number> = { ns: 6, us: 3, ms: 0, s: 0, m: 0, h: 0 };
const MS_PER_UNIT: Record<Precision, number> = { ns: 1, us: 1, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const FLOAT = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const INTEGER = /^[-+]?\d+$/;
const UNSIGNED = /^\d+$/;
const TRUE = new Set(['t', 'T', 'true', 'True', 'TRUE']);
const FALSE = new Set(['f', 'F', 'false', 'False', 'FALSE']);

/** A bad point, thrown inside the parser and turned into a LineIssue with its line and column. */
/** A series met before in this text: its parsed key, and (columnar mode) its columns and how many. */
interface Known {
  readonly metric: string;
  readonly tags: Record<string, string>;
  group: LineSeries | undefined;
  width: number;
}

class Fail extends Error {
  constructor(
    readonly at: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * InfluxDB line protocol → samples, as the spec says
 * (`measurement[,tag=value...] field=value[,field=value...] [timestamp]`):
 *
 * - the measurement is the metric, tags are tags, and all fields of a line are one sample of one
 *   series (a multi-field line is not split into a series per field);
 * - floats, integers (`12i`), unsigned integers (`12u`) become numbers — S4 stores every number
 *   as a float64, so an integer beyond ±2^53 (which a float64 cannot hold exactly) is refused
 *   rather than silently rounded; strings stay strings, booleans (t, T, true, True, TRUE and the
 *   f forms) stay booleans;
 * - escapes: `\,` and `\ ` in measurements; `\,` `\=` `\ ` in tag keys, tag values and field keys;
 *   `\"` in string values; `\\` is one backslash everywhere; any other backslash is literal;
 * - timestamps in `precision` units are truncated to milliseconds (S4's resolution): two points
 *   of one series in the same millisecond collide and the later wins; a point without one gets
 *   `now`;
 * - blank lines and `#` comments are skipped; a string value may span lines.
 *
 * Every bad line is reported (up to maxIssues) with its line and column; the caller decides
 * whether anything is written (the server writes nothing when there is any issue).
 */
export function parseLineProtocol(text: string, options: LineProtocolOptions): ParsedPoints {
  const samples: Sample[] = [];
  const lines: number[] = [];
  const keys: string[] = [];
  const issues: LineIssue[] = [];
  const groups: LineSeries[] = [];
  const columnar = options.columns === true;
  // One point's fields, reused from line to line.
  const names: string[] = [];
  const values: FieldValue[] = [];
  const maxIssues = options.maxIssues ?? 100;
  const { precision } = options;
  const n = text.length;
  let line = options.firstLine ?? 1;
  let lineStart = 0;
  let i = 0;
  /** Where the current point's measurement and tags end. */
  let seriesEnd = 0;
  /**
   * Series already read in this text, by their text: a repeated series (the usual case) is not
   * parsed again, and its samples share one metric and tags object.
   */
  const seen = new Map<string, Known>();

  while (i < n && issues.length < maxIssues) {
    // Leading whitespace, blank lines, comments.
    const c = text.charCodeAt(i);
    if (c === NL) {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === SPACE || c === TAB || c === CR) {
      i++;
      continue;
    }
    if (c === HASH) {
      while (i < n && text.charCodeAt(i) !== NL) i++;
      continue;
    }
    const startLine = line;
    const startOfLine = lineStart;
    try {
      point(startLine);
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      // The failure may sit on a later line than the point's first (a string spanning lines).
      const before = text.slice(startOfLine, e.at);
      const newlines = before.split('\n').length - 1;
      const column = newlines === 0 ? e.at - startOfLine + 1 : before.length - before.lastIndexOf('\n');
      issues.push({ line: startLine + newlines, column, message: e.message });
      while (i < n && text.charCodeAt(i) !== NL) i++;
    }
  }
  return { samples, lines, keys, series: groups, issues };

  function fail(message: string, at = i): never {
    throw new Fail(at, message);
  }

  /**
   * A name up to an unescaped stop (comma, space, line end; `=` too where `stopAtEquals`). A
   * backslash escapes comma, space and backslash, and `=` where `escapeEquals`. `what` names it
   * in an error (a function, so the happy path builds no message).
   */
  function name(what: () => string, stopAtEquals: boolean, escapeEquals: boolean): string {
    const start = i;
    // Fast path: no backslash before the stop, the name is one slice of the text.
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === SPACE || (stopAtEquals && c === EQUALS) || c === NL || c === CR) {
        if (i === start) fail(`empty ${what()}`, start);
        return text.slice(start, i);
      }
      if (c === BACKSLASH) break;
    }
    let out = '';
    let from = start;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === BACKSLASH && i + 1 < n) {
        const d = text.charCodeAt(i + 1);
        if (d === COMMA || d === SPACE || d === BACKSLASH || (escapeEquals && d === EQUALS)) {
          out += text.slice(from, i);
          from = i + 1;
          i++;
          continue;
        }
      }
      if (c === COMMA || c === SPACE || (stopAtEquals && c === EQUALS) || c === NL || c === CR) break;
    }
    out += text.slice(from, i);
    if (out === '') fail(`empty ${what()}`, start);
    return out;
  }

  function point(lineNo: number): void {
    const start = i;
    let end = i;
    for (; end < n; end++) {
      const c = text.charCodeAt(end);
      if (c === BACKSLASH) end++;
      else if (c === SPACE || c === NL || c === CR) break;
    }
    const keyText = text.slice(start, end);
    const known = end < n && text.charCodeAt(end) === SPACE ? seen.get(keyText) : undefined;
    let entry: Known;
    if (known) {
      entry = known;
      i = seriesEnd = end;
    } else {
      const { metric, tags } = series();
      entry = { metric, tags, group: undefined, width: 0 };
      // Only a series whose text ends where the scan ended is known by that text.
      if (seriesEnd === end) seen.set(keyText, entry);
    }
    const { metric, tags } = entry;
    if (text.charCodeAt(i) !== SPACE) fail(i >= n || text.charCodeAt(i) === NL || text.charCodeAt(i) === CR ? 'the line has no fields (expected a space, then field=value)' : `unexpected ${JSON.stringify(text[i])} after the measurement and tags (an unescaped character?)`);
    const ts = rest();
    if (columnar) {
      let g = entry.group;
      if (!g) groups.push((g = entry.group = { metric, tags, ts: [], fields: nameMap(), lines: [] }));
      const count = g.ts.length;
      g.ts.push(ts);
      g.lines.push(lineNo);
      for (let k = 0; k < names.length; k++) {
        let col = g.fields[names[k]!];
        if (col === undefined) {
          g.fields[names[k]!] = col = new Array<FieldValue>(count).fill(null);
          entry.width++;
        }
        col.push(values[k]!);
      }
      // A line without some of the series' fields: pad those columns.
      if (names.length !== entry.width) for (const f in g.fields) if (g.fields[f]!.length === count) g.fields[f]!.push(null);
      return;
    }
    const fields = nameMap<FieldValue>();
    for (let k = 0; k < names.length; k++) fields[names[k]!] = values[k]!;
    samples.push({ metric, tags, ts, fields });
    lines.push(lineNo);
    keys.push(keyText);
  }

  function series(): { metric: string; tags: Record<string, string> } {
    const metric = name(() => 'measurement', false, false);
    const tags = nameMap<string>();
    while (text.charCodeAt(i) === COMMA) {
      i++;
      const keyAt = i;
      const key = name(() => 'tag key', true, true);
      if (text.charCodeAt(i) !== EQUALS) fail(`tag ${JSON.stringify(key)} has no "=value"`);
      i++;
      const value = name(() => `value of tag ${JSON.stringify(key)}`, true, true);
      if (Object.hasOwn(tags, key)) fail(`tag key ${JSON.stringify(key)} appears twice`, keyAt);
      tags[key] = value;
    }
    seriesEnd = i;
    return { metric, tags };
  }

  /** Fields (into names and values) and the timestamp, from the space after the series. */
  function rest(): number {
    while (text.charCodeAt(i) === SPACE) i++;
    names.length = 0;
    values.length = 0;
    for (;;) {
      const keyAt = i;
      const key = name(() => 'field key', true, true);
      if (text.charCodeAt(i) !== EQUALS) fail(`field ${JSON.stringify(key)} has no "=value"`);
      i++;
      const value = fieldValue(key);
      if (names.includes(key)) fail(`field key ${JSON.stringify(key)} appears twice`, keyAt);
      names.push(key);
      values.push(value);
      if (text.charCodeAt(i) !== COMMA) break;
      i++;
    }

    let ts = options.now;
    if (text.charCodeAt(i) === SPACE) {
      while (text.charCodeAt(i) === SPACE) i++;
      const at = i;
      let digitsOnly = true;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === SPACE || c === NL || c === CR || c === TAB) break;
        if (c < 0x30 || c > 0x39) digitsOnly = false;
        i++;
      }
      const keep = i - at - DROP_DIGITS[precision];
      if (i > at) ts = digitsOnly && keep <= 15 ? (keep > 0 ? wholeNumber(at, at + keep) : 0) * MS_PER_UNIT[precision] : timestamp(text.slice(at, i), at);
    }
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === NL) break;
      if (c !== SPACE && c !== TAB && c !== CR) fail(`unexpected ${JSON.stringify(text[i])} after the timestamp`);
      i++;
    }
    return ts;
  }

  function fieldValue(key: string): FieldValue {
    const at = i;
    if (text.charCodeAt(i) === QUOTE) {
      i++;
      let out = '';
      let from = i;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === BACKSLASH && i + 1 < n) {
          const d = text.charCodeAt(i + 1);
          if (d === QUOTE || d === BACKSLASH) {
            out += text.slice(from, i);
            from = ++i;
          }
        } else if (c === QUOTE) {
          out += text.slice(from, i);
          i++;
          return out;
        } else if (c === NL) {
          line++;
          lineStart = i + 1;
        }
      }
      return fail(`the string value of field ${JSON.stringify(key)} has no closing quote`, at);
    }
    // The common case, a plain float (`21.37`, `-1.5e3`), is checked by its characters and
    // converted by Number() (correct rounding), without a token slice through a regular expression.
    const plain = plainFloatEnd(at);
    if (plain > at) {
      const after = text.charCodeAt(plain);
      if (plain === n || after === COMMA || after === SPACE || after === NL || after === CR) {
        i = plain;
        return Number(text.slice(at, plain));
      }
    }
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === SPACE || c === NL || c === CR) break;
      i++;
    }
    const token = text.slice(at, i);
    if (token === '') fail(`field ${JSON.stringify(key)} has no value`, at);
    const last = token.charCodeAt(token.length - 1);
    if (last === 0x69 /* i */ || last === 0x75 /* u */) {
      const digits = token.slice(0, -1);
      if (!(last === 0x69 ? INTEGER : UNSIGNED).test(digits)) fail(`field ${JSON.stringify(key)}: ${JSON.stringify(token)} is not ${last === 0x69 ? 'an integer' : 'an unsigned integer'}`, at);
      const v = Number(digits);
      if (!Number.isSafeInteger(v))
        fail(`field ${JSON.stringify(key)}: ${token} is beyond ±2^53, which S4 (storing numbers as float64) cannot hold exactly; send it as a float (no suffix) to accept rounding`, at);
      return v;
    }
    if (FLOAT.test(token)) return Number(token);
    if (TRUE.has(token)) return true;
    if (FALSE.has(token)) return false;
    return fail(`field ${JSON.stringify(key)}: ${JSON.stringify(token)} is not a float, integer (i), unsigned (u), "string" or boolean`, at);
  }

  /** The decimal digits in [from, to) as a number (at most 15 digits: exact). */
  function wholeNumber(from: number, to: number): number {
    let v = 0;
    for (let k = from; k < to; k++) v = v * 10 + (text.charCodeAt(k) - 0x30);
    return v;
  }

  /** Where a float of the spec's grammar starting at `from` ends; `from` when there is none. */
  function plainFloatEnd(from: number): number {
    let k = from;
    let c = text.charCodeAt(k);
    if (c === 0x2d || c === 0x2b) c = text.charCodeAt(++k);
    let digits = 0;
    while (c >= 0x30 && c <= 0x39) {
      digits++;
      c = text.charCodeAt(++k);
    }
    if (c === 0x2e) {
      c = text.charCodeAt(++k);
      while (c >= 0x30 && c <= 0x39) {
        digits++;
        c = text.charCodeAt(++k);
      }
    }
    if (digits === 0) return from;
    if (c === 0x65 || c === 0x45) {
      c = text.charCodeAt(++k);
      if (c === 0x2d || c === 0x2b) c = text.charCodeAt(++k);
      let exp = 0;
      while (c >= 0x30 && c <= 0x39) {
        exp++;
        c = text.charCodeAt(++k);
      }
      if (exp === 0) return from;
    }
    return k;
  }

  function timestamp(token: string, at: number): number {
    if (!UNSIGNED.test(token)) fail(token.startsWith('-') && UNSIGNED.test(token.slice(1)) ? `timestamp ${token} is before 1970; S4 stores times from the Unix epoch on` : `bad timestamp ${JSON.stringify(token)} (an integer in ${options.precision} expected)`, at);
    return toMillis(token, options.precision);
  }
}

/** Decimal digits of a timestamp in `precision` units → whole milliseconds (truncated). */
export function toMillis(digits: string, precision: Precision): number {
  switch (precision) {
    case 'ms':
      return Number(digits);
    case 's':
      return Number(digits) * 1000;
    case 'm':
      return Number(digits) * 60_000;
    case 'h':
      return Number(digits) * 3_600_000;
    case 'us':
      return digits.length > 3 ? Number(digits.slice(0, -3)) : 0;
    case 'ns':
      return digits.length > 6 ? Number(digits.slice(0, -6)) : 0;
  }
}

/**
 * One sample as a line of line protocol, timestamp in ms precision; the inverse of the parser for
 * every sample it can express. Numbers are written as floats (`3` reads back as 3), so the `i`
 * suffix is never needed. Throws for what line protocol cannot carry: no fields, null or nested
 * values, NaN and ±Infinity, newlines in names, a measurement starting with `#`.
 */
export function formatLine(sample: Sample): string {
  const { metric, tags, ts, fields } = sample;
  if (metric.startsWith('#')) throw new Error('a measurement cannot start with # in line protocol (it would read as a comment)');
  let out = escapeName(metric, false);
  for (const [k, v] of Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out += `,${escapeName(k, true)}=${escapeName(v, true)}`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (v === null) continue;
    parts.push(`${escapeName(k, true)}=${formatValue(k, v)}`);
  }
  if (parts.length === 0) throw new Error('line protocol needs at least one field');
  return `${out} ${parts.join(',')} ${ts}`;
}

function formatValue(key: string, v: FieldValue): string {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`field ${key}: line protocol has no ${v}`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  throw new Error(`field ${key}: line protocol carries only numbers, strings and booleans`);
}

function escapeName(s: string, equals: boolean): string {
  if (/[\n\r]/.test(s)) throw new Error(`${JSON.stringify(s)}: line protocol names cannot hold a newline`);
  let out = s.replaceAll('\\', '\\\\').replaceAll(',', '\\,').replaceAll(' ', '\\ ');
  if (equals) out = out.replaceAll('=', '\\=');
  return out;
}
