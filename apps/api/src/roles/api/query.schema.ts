import { z } from 'zod';
import { MATCH_OPS, ValidationError, compileMatchers, nameMap, type TagMatcher } from '@s4/core';
import { AGGS, type AggregateSpec, type QuerySpec } from '@s4/engine';
import { FORMATS, type Format } from './output/formats.js';

/** A time: integer milliseconds since the epoch, or an ISO-8601 date-time. */
export const time = z.union([z.number(), z.string().min(1)]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isSafeInteger(n)) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} is not integer milliseconds or an ISO-8601 time` });
    return z.NEVER;
  }
  return n;
});

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration: integer milliseconds or a number with a unit (`500ms`, `30s`, `1m`, `1h`, `1d`). */
const duration = z.union([z.number(), z.string().min(1)]).transform((v, ctx) => {
  const m = typeof v === 'number' ? null : /^(\d+)(ms|s|m|h|d)?$/.exec(v);
  const n = typeof v === 'number' ? v : m ? Number(m[1]) * UNITS[m[2] ?? 'ms']! : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} is not a positive duration (ms, or 30s, 1m, 1h, 1d)` });
    return z.NEVER;
  }
  return n;
});
const aggList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(z.enum(AGGS, { error: `agg must be one of ${AGGS.join(', ')}` })).min(1, 'agg needs at least one of avg, min, max, sum, count, first, last'));
const csvList = z.string().transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean));
const maxPoints = z.coerce.number().int('maxPoints must be an integer').min(4, 'maxPoints must be at least 4');

export const tagPair = z.string().regex(/^[^:]+:.*$/, 'tags are written key:value');
/** `key=value`, `key!=value`, `key=~regex`, `key!~regex`: the key ends at the first operator. */
const MATCH_RE = /^(.+?)(=~|!~|!=|=)(.*)$/s;
const matchParam = z.string().regex(MATCH_RE, 'matchers are written key=value, key!=value, key=~regex or key!~regex');
const matchList = z.union([matchParam, z.array(matchParam)]).optional();
const matcherBody = z.strictObject({ key: z.string().min(1, 'a matcher needs a tag key'), op: z.enum(MATCH_OPS, { error: `op must be one of ${MATCH_OPS.join(' ')}` }), value: z.string() });

export const queryParamsSchema = z.strictObject({
  metric: z.string().min(1, 'metric is required'),
  tag: z.union([tagPair, z.array(tagPair)]).optional(),
  match: matchList,
  from: time,
  to: time,
  fields: z.string().optional(),
  format: z.enum(FORMATS).optional(),
  step: duration.optional(),
  agg: aggList.optional(),
  groupBy: csvList.optional(),
  maxPoints: maxPoints.optional(),
});

export const queryBodySchema = z.strictObject({
  metric: z.string().min(1, 'metric is required'),
  tags: z.record(z.string(), z.string()).default({}),
  matchers: z.array(matcherBody).optional(),
  from: time,
  to: time,
  fields: z.array(z.string().min(1)).optional(),
  format: z.enum(FORMATS).optional(),
  step: duration.optional(),
  agg: aggList.optional(),
  groupBy: z.array(z.string()).optional(),
  maxPoints: maxPoints.optional(),
});

export const seriesParamsSchema = z.strictObject({
  metric: z.string().min(1).optional(),
  tag: z.union([tagPair, z.array(tagPair)]).optional(),
  match: matchList,
  from: time.optional(),
  to: time.optional(),
});

export interface ParsedQuery {
  /** Raw samples, or one value per step bucket when `step` was given. */
  spec: QuerySpec | AggregateSpec;
  format: Format;
}

interface Common {
  metric: string;
  from: number;
  to: number;
  step?: number | undefined;
  agg?: (typeof AGGS)[number][] | undefined;
  groupBy?: string[] | undefined;
  maxPoints?: number | undefined;
}

function toSpec(p: Common, tags: Record<string, string>, matchers: TagMatcher[] | undefined, fields: string[] | undefined, where: string): QuerySpec | AggregateSpec {
  checkRange(p.from, p.to);
  const base = { metric: p.metric, tags, matchers, from: p.from, to: p.to, fields };
  if (p.step === undefined) {
    if (p.agg || p.groupBy) throw new ValidationError([{ path: `${where}.step`, message: 'agg and groupBy need a step (e.g. step=1m)' }]);
    return { ...base, maxPoints: p.maxPoints };
  }
  if (p.maxPoints !== undefined) throw new ValidationError([{ path: `${where}.maxPoints`, message: 'maxPoints applies to raw queries; with a step, choose a larger step instead' }]);
  if ((p.to - p.from) / p.step > 10_000_000) throw new ValidationError([{ path: `${where}.step`, message: `step ${p.step} ms makes more than 10,000,000 buckets over the range` }]);
  return { ...base, step: p.step, aggs: p.agg ?? ['avg'], groupBy: p.groupBy };
}

export function isAggregate(spec: QuerySpec | AggregateSpec): spec is AggregateSpec {
  return 'step' in spec;
}

export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown, where: string): z.infer<T> {
  const r = schema.safeParse(input ?? {});
  if (!r.success) throw new ValidationError(r.error.issues.map((i) => ({ path: [where, ...i.path].join('.'), message: i.message })));
  return r.data;
}

export function tagsFromParams(tag: string | string[] | undefined): Record<string, string> {
  const tags = nameMap<string>();
  for (const t of typeof tag === 'string' ? [tag] : (tag ?? [])) {
    const i = t.indexOf(':');
    tags[t.slice(0, i)] = t.slice(i + 1);
  }
  return tags;
}

/**
 * `match` parameters as matchers, each regular expression compiled once here so that a bad one
 * is a 400 naming it. Undefined when there are none.
 */
export function matchersFromParams(match: string | string[] | undefined, where = 'query.match'): TagMatcher[] | undefined {
  const list = typeof match === 'string' ? [match] : (match ?? []);
  if (list.length === 0) return undefined;
  return checkMatchers(
    list.map((m) => {
      const [, key, op, value] = MATCH_RE.exec(m)!;
      return { key: key!, op: op as TagMatcher['op'], value: value! };
    }),
    where,
  );
}

/** The matchers, refused with a 400 when a regular expression does not compile or is too long. */
export function checkMatchers(matchers: TagMatcher[] | undefined, where: string): TagMatcher[] | undefined {
  try {
    compileMatchers(matchers);
  } catch (e) {
    if (e instanceof RangeError) throw new ValidationError([{ path: where, message: e.message }]);
    throw e;
  }
  return matchers;
}

function checkRange(from: number, to: number): void {
  if (to <= from) throw new ValidationError([{ path: 'query.to', message: `to (${to}) must be greater than from (${from}); the range is [from, to)` }]);
}

/** Format: explicit parameter, else the Accept header, else JSON. */
function pickFormat(explicit: Format | undefined, accept: string | undefined): Format {
  if (explicit) return explicit;
  if (accept?.includes('application/msgpack')) return 'msgpack';
  if (accept?.includes('application/x-ndjson')) return 'ndjson';
  if (accept?.includes('text/csv')) return 'csv';
  return 'json';
}

export function parseQueryParams(params: unknown, accept?: string): ParsedQuery {
  const p = parseOrThrow(queryParamsSchema, params, 'query');
  const fields = p.fields?.split(',').map((f) => f.trim()).filter(Boolean);
  // `groupBy=` (empty) means one group of every matched series.
  const groupBy = p.groupBy ?? ((params as Record<string, unknown>).groupBy === '' ? [] : undefined);
  return { spec: toSpec({ ...p, groupBy }, tagsFromParams(p.tag), matchersFromParams(p.match), fields, 'query'), format: pickFormat(p.format, accept) };
}

export function parseQueryBody(body: unknown, accept?: string): ParsedQuery {
  const p = parseOrThrow(queryBodySchema, body, 'body');
  return { spec: toSpec(p, p.tags, checkMatchers(p.matchers, 'body.matchers'), p.fields, 'body'), format: pickFormat(p.format, accept) };
}

export const latestParamsSchema = queryParamsSchema
  .pick({ metric: true, tag: true, match: true, fields: true, format: true })
  .extend({ from: time.optional(), to: time.optional() });

/** Latest sample per series in [from, to): `to` defaults to now + the allowed future, `from` to one day before `to`. */
export function parseLatestParams(params: unknown, accept: string | undefined, now: number, maxFutureMs: number): ParsedQuery {
  const p = parseOrThrow(latestParamsSchema, params, 'query');
  const to = p.to ?? now + maxFutureMs + 1;
  const from = p.from ?? to - 86_400_000;
  checkRange(from, to);
  const fields = p.fields?.split(',').map((f) => f.trim()).filter(Boolean);
  return { spec: { metric: p.metric, tags: tagsFromParams(p.tag), matchers: matchersFromParams(p.match), from, to, fields }, format: pickFormat(p.format, accept) };
}
