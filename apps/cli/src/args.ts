import { parseArgs, type ParseArgsConfig } from 'node:util';
import { S4Client, type Tags } from '@s4/sdk';
import { UsageError, type Io } from './io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  namespace: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** Options of commands that select samples. */
export const SELECTOR_OPTIONS = {
  metric: { type: 'string', short: 'm' },
  tag: { type: 'string', short: 't', multiple: true },
  from: { type: 'string' },
  to: { type: 'string' },
  fields: { type: 'string' },
} as const satisfies Options;

export function parse<const O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...GLOBAL_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify an option argument starting with a dash use (.*)$/, ' (write $1)');
    throw new UsageError(message);
  }
}

/**
 * A client from --url/--api-key/--namespace or S4_URL/S4_API_KEY/S4_NAMESPACE. Interactive
 * commands retry briefly (a person is waiting); bulk ones (import) ride out a server restart.
 */
export function clientFrom(values: { url?: string | undefined; 'api-key'?: string | undefined; namespace?: string | undefined }, io: Io, url?: string, bulk = false): S4Client {
  const base = url ?? values.url ?? io.env.S4_URL ?? 'http://localhost:8080';
  if (!/^https?:\/\//.test(base)) throw new UsageError(`--url must be an http(s) URL, got ${base}`);
  const apiKey = values['api-key'] ?? io.env.S4_API_KEY;
  const namespace = values.namespace ?? io.env.S4_NAMESPACE;
  const retry = bulk ? { retries: 12, minDelayMs: 100, maxDelayMs: 10_000 } : { retries: 2, minDelayMs: 100, maxDelayMs: 1000 };
  return new S4Client({ url: base, retry, timeoutMs: bulk ? 60_000 : 30_000, ...(apiKey === undefined ? {} : { apiKey }), ...(namespace === undefined ? {} : { namespace }) });
}

/** `--tag k:v` (or `k=v`), repeatable. */
export function parseTags(list: string[] | undefined): Tags {
  const tags: Tags = {};
  for (const item of list ?? []) {
    const at = item.search(/[:=]/);
    if (at <= 0) throw new UsageError(`--tag expects key:value, got ${JSON.stringify(item)}`);
    tags[item.slice(0, at)] = item.slice(at + 1);
  }
  return tags;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A point in time: integer milliseconds, an ISO date, `now`, or relative to now: `-1h`,
 * `now-15m`, `now+1d` (units ms, s, m, h, d, w).
 */
export function parseTime(text: string, name: string, now = Date.now()): number {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return Number(t);
  const rel = /^(?:now)?\s*(?:([+-])\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w))?$/.exec(t);
  if (rel !== null && (t.startsWith('now') || rel[1] !== undefined)) {
    if (rel[1] === undefined) return now;
    const delta = Math.round(Number(rel[2]) * (UNITS[rel[3] as string] as number));
    return rel[1] === '-' ? now - delta : now + delta;
  }
  const date = Date.parse(t);
  if (!Number.isNaN(date) && /\d{4}-\d{2}-\d{2}/.test(t)) return date;
  throw new UsageError(`--${name}: cannot read ${JSON.stringify(text)} as a time (use ms since epoch, an ISO date, now, -1h, now-30m)`);
}

export function parseFields(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const fields = text.split(',').map((f) => f.trim()).filter((f) => f !== '');
  return fields.length > 0 ? fields : undefined;
}

export function positiveInt(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, got ${text}`);
  return n;
}

/** `metric{k=v,k2=v2}` with tags sorted: how series are printed everywhere in the CLI. */
export function seriesLabel(metric: string, tags: Tags): string {
  const keys = Object.keys(tags).sort();
  return keys.length === 0 ? metric : `${metric}{${keys.map((k) => `${k}=${tags[k] ?? ''}`).join(',')}}`;
}
