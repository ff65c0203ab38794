import { nameMap, type Sample } from '@s4/core';

/**
 * Graphite's plaintext protocol, one point a line: `path value timestamp`, or the tagged form
 * `path;tag1=v1;tag2=v2 value timestamp` (graphite.readthedocs.io, "Feeding in your data" and
 * "Graphite Tag Support"). The path is the metric, tags are tags, the value is the field `value`;
 * the timestamp is Unix seconds (fractions kept to the millisecond), and -1 or a missing one
 * means `now`, as carbon reads them. Tag names may not hold `;!^=`, tag values may not hold `;~`
 * or be empty, and neither may be empty.
 */
export function parseGraphiteLine(line: string, now: number): Sample | string {
  const parts = line.trim().split(/[ \t]+/);
  if (parts.length < 2 || parts.length > 3 || parts[0] === '') return 'expected "path value timestamp"';
  const [pathPart, valueText, tsText] = parts as [string, string, string | undefined];
  const [metric, ...tagParts] = pathPart.split(';');
  if (!metric) return 'empty metric path';
  const tags = nameMap<string>();
  for (const t of tagParts) {
    const eq = t.indexOf('=');
    if (eq <= 0) return `tag ${JSON.stringify(t)} is not name=value`;
    const name = t.slice(0, eq);
    const value = t.slice(eq + 1);
    if (/[;!^=]/.test(name)) return `tag name ${JSON.stringify(name)} holds one of ;!^=`;
    if (value === '' || /[;~]/.test(value)) return `tag ${JSON.stringify(name)} has an empty value or one holding ; or ~`;
    if (Object.hasOwn(tags, name)) return `tag ${JSON.stringify(name)} appears twice`;
    tags[name] = value;
  }
  const value = number(valueText);
  if (value === undefined) return `value ${JSON.stringify(valueText)} is not a number`;
  let ts = now;
  if (tsText !== undefined && tsText !== '-1') {
    if (!/^\d+(\.\d+)?$/.test(tsText)) return `timestamp ${JSON.stringify(tsText)} is not Unix seconds`;
    ts = Math.round(Number(tsText) * 1000);
  }
  return { metric, tags, ts, fields: { value } };
}

/** A decimal float, or inf/infinity/nan in any case (what carbon's float parsing accepts). */
function number(text: string): number | undefined {
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
  const special = /^([-+]?)(inf|infinity|nan)$/i.exec(text);
  if (!special) return undefined;
  if (special[2]!.toLowerCase() === 'nan') return NaN;
  return special[1] === '-' ? -Infinity : Infinity;
}

/** The inverse for tests and benches: a sample with a numeric `value` as one plaintext line (no newline). */
export function formatGraphiteLine(sample: Sample): string {
  const tags = Object.entries(sample.tags)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `;${k}=${v}`)
    .join('');
  const v = sample.fields.value as number;
  return `${sample.metric}${tags} ${v === Infinity ? 'inf' : v === -Infinity ? '-inf' : String(v)} ${sample.ts / 1000}`;
}

/**
 * A Graphite path pattern (`servers.*.cpu`, `a.{b,c}.d`, `x.[0-9]`, `?`) as an anchored regular
 * expression: `*` and `?` never cross a dot, as in Graphite.
 */
export function graphiteGlob(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^.]*';
    else if (c === '?') re += '[^.]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i);
      if (end < 0) re += '\\[';
      else {
        re += `[${pattern.slice(i + 1, end).replace(/[\\^]/g, '\\$&')}]`;
        i = end;
      }
    } else if (c === '{') {
      const end = pattern.indexOf('}', i);
      if (end < 0) re += '\\{';
      else {
        re += `(?:${pattern
          .slice(i + 1, end)
          .split(',')
          .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('\\*', '[^.]*'))
          .join('|')})`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'u');
}
