import { z } from 'zod';
import { ValidationError } from '@s4/core';
import type { QuerySpec } from '@s4/engine';
import { FORMATS, type Format } from './output/formats.js';

/** A time: integer milliseconds since the epoch, or an ISO-8601 date-time. */
const time = z.union([z.number(), z.string().min(1)]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isSafeInteger(n)) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} is not integer milliseconds or an ISO-8601 time` });
    return z.NEVER;
  }
  return n;
});

const tagPair = z.string().regex(/^[^:]+:.*$/, 'tags are written key:value');

export const queryParamsSchema = z.strictObject({
  metric: z.string().min(1, 'metric is required'),
  tag: z.union([tagPair, z.array(tagPair)]).optional(),
  from: time,
  to: time,
  fields: z.string().optional(),
  format: z.enum(FORMATS).optional(),
});

export const queryBodySchema = z.strictObject({
  metric: z.string().min(1, 'metric is required'),
  tags: z.record(z.string(), z.string()).default({}),
  from: time,
  to: time,
  fields: z.array(z.string().min(1)).optional(),
  format: z.enum(FORMATS).optional(),
});

export const seriesParamsSchema = z.strictObject({
  metric: z.string().min(1).optional(),
  tag: z.union([tagPair, z.array(tagPair)]).optional(),
  from: time.optional(),
  to: time.optional(),
});

export interface ParsedQuery {
  spec: QuerySpec;
  format: Format;
}

export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown, where: string): z.infer<T> {
  const r = schema.safeParse(input ?? {});
  if (!r.success) throw new ValidationError(r.error.issues.map((i) => ({ path: [where, ...i.path].join('.'), message: i.message })));
  return r.data;
}

export function tagsFromParams(tag: string | string[] | undefined): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const t of typeof tag === 'string' ? [tag] : (tag ?? [])) {
    const i = t.indexOf(':');
    tags[t.slice(0, i)] = t.slice(i + 1);
  }
  return tags;
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
  checkRange(p.from, p.to);
  const fields = p.fields?.split(',').map((f) => f.trim()).filter(Boolean);
  return { spec: { metric: p.metric, tags: tagsFromParams(p.tag), from: p.from, to: p.to, fields }, format: pickFormat(p.format, accept) };
}

export function parseQueryBody(body: unknown, accept?: string): ParsedQuery {
  const p = parseOrThrow(queryBodySchema, body, 'body');
  checkRange(p.from, p.to);
  return { spec: { metric: p.metric, tags: p.tags, from: p.from, to: p.to, fields: p.fields }, format: pickFormat(p.format, accept) };
}
