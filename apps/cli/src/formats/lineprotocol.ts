import type { FieldValue, Sample, Tags } from '@s4/sdk';
import { InputError } from './errors.js';

export type Precision = 'ns' | 'us' | 'ms' | 's';
const ESCAPABLE = ', =\\';
const PER_MS: Record<Precision, bigint> = { ns: 1_000_000n, us: 1_000n, ms: 1n, s: 0n };

/**
 * One line of InfluxDB line protocol → one sample:
 * `measurement[,tag=v...] field=value[,field=value...] [timestamp]`. The measurement becomes the
 * metric, fields keep their names (`value` is not implied). Integers (`12i`, `12u`) become
 * numbers, timestamps are truncated to milliseconds (two points in the same millisecond collide,
 * the later wins). A line without a timestamp gets `now`. Blank lines and `#` comments give null.
 */
export function parseLine(text: string, line: number, precision: Precision, now: number): Sample | null {
  const s = text.trimStart();
  if (s === '' || s.startsWith('#')) return null;
  let i = 0;
  const fail = (message: string): never => {
    throw new InputError(line, `line protocol: ${message}`);
  };

  // measurement: up to an unescaped ',' or ' '
  let metric = '';
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && escapes(s[i + 1])) metric += s[++i];
    else if (c === ',' || c === ' ') break;
    else metric += c;
  }
  if (metric === '') fail('missing measurement');

  const tags: Tags = {};
  while (s[i] === ',') {
    i++;
    const key = readUntil('=, ');
    if (s[i] !== '=') fail(`expected tag=value near column ${i + 1}`);
    i++;
    const value = readUntil(', ');
    if (key === '' || value === '') fail(`empty tag key or value near column ${i}`);
    tags[key] = value;
  }
  if (s[i] !== ' ') fail('expected a space before the fields');
  while (s[i] === ' ') i++;

  const fields: Record<string, FieldValue> = {};
  for (;;) {
    const key = readUntil('=, ');
    if (s[i] !== '=' || key === '') fail(`expected field=value near column ${i + 1}`);
    i++;
    fields[key] = readFieldValue();
    if (s[i] === ',') {
      i++;
      continue;
    }
    break;
  }
  while (s[i] === ' ') i++;
  const rest = s.slice(i).trim();
  let ts = now;
  if (rest !== '') {
    if (!/^-?\d+$/.test(rest)) fail(`bad timestamp ${JSON.stringify(rest)}`);
    const raw = BigInt(rest);
    ts = precision === 's' ? Number(raw * 1000n) : Number(raw / PER_MS[precision]);
  }
  return { metric, tags, ts, fields };

  /** Reads up to an unescaped stop character; `\` escapes comma, space, equals sign and backslash. */
  function readUntil(stops: string): string {
    let out = '';
    for (; i < s.length; i++) {
      const c = s[i] as string;
      if (c === '\\' && escapes(s[i + 1])) out += s[++i];
      else if (stops.includes(c)) break;
      else out += c;
    }
    return out;
  }

  function readFieldValue(): FieldValue {
    if (s[i] === '"') {
      let out = '';
      for (i++; i < s.length; i++) {
        const c = s[i];
        if (c === '\\' && (s[i + 1] === '"' || s[i + 1] === '\\')) out += s[++i];
        else if (c === '"') {
          i++;
          return out;
        } else out += c;
      }
      return fail('unterminated string field');
    }
    const start = i;
    while (i < s.length && s[i] !== ',' && s[i] !== ' ') i++;
    const token = s.slice(start, i);
    if (/^[tT](rue|RUE)?$|^True$/.test(token)) return true;
    if (/^[fF](alse|ALSE)?$|^False$/.test(token)) return false;
    const int = /^(-?\d+)[iu]$/.exec(token);
    const n = int !== null ? Number(int[1]) : Number(token);
    if (token === '' || !Number.isFinite(n)) fail(`bad field value ${JSON.stringify(token)}`);
    return n;
  }
}

function escapes(next: string | undefined): boolean {
  return next !== undefined && next.length === 1 && ESCAPABLE.includes(next);
}
