import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { S4Error } from '@s4/core';
import { ScannedWrite, type WriteBody } from '@s4/engine';
import type { ApiKeyGuard } from '../../http/api-key.guard.js';
import type { Ingest } from './ingest.js';
import { ERROR_SCHEMA, WRITE_BODY_SCHEMA } from './openapi.js';

const WRITE_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/ndjson', 'application/msgpack']);
const WRITE_TYPES_TEXT = [...WRITE_TYPES].join(', ');

/**
 * POST /v1/write as a Fastify route of its own, not a Nest controller: a single-sample write is
 * mostly per-request cost, and Nest's router, guard and exception layers were a share of it
 * measured in the profile (see docs/benchmarks.md, issue 12). The contract is the controller's:
 * the same API-key check (ApiKeyGuard.check), the body parsers and limits of http/body.ts, and
 * errors thrown from here reach the same ErrorsFilter through the error handler Nest installs
 * on the Fastify instance, so every 4xx and 503 (with Retry-After) reads as before.
 */
export function installWriteRoute(fastify: FastifyInstance, ingest: Ingest, guard: ApiKeyGuard): void {
  fastify.post('/v1/write', async (req: FastifyRequest, reply: FastifyReply) => {
    guard.check(req, reply);
    const header = req.headers['content-type'];
    // The common header, `application/json` exactly, without the split and lower-casing.
    const type = header === 'application/json' ? header : (header ?? '').split(';')[0]!.trim().toLowerCase();
    if (!WRITE_TYPES.has(type)) throw new S4Error('unsupported_media_type', `Content-Type ${type || '(none)'} is not accepted; use ${WRITE_TYPES_TEXT}`, 415);
    const raw = req.body;
    const body: WriteBody =
      raw instanceof ScannedWrite
        ? { kind: 'scanned', scanned: raw }
        : typeof raw === 'string'
          ? { kind: 'ndjson', text: raw }
          : { kind: 'json', body: raw };
    // Ingest lets go of the parsed body once it is checked (so that it dies young while the write
    // waits for durability); the request must not hold it either.
    req.body = undefined;
    const result = await ingest.write(body);
    return reply.status(result.queued ? 202 : 204).send();
  });
}

/** The OpenAPI operation of POST /v1/write (the route is not a Nest controller, so it is described here). */
export const WRITE_OPERATION = {
  summary: 'Write samples',
  description:
    'The whole request is validated first; 204 once every sample is durable in the hot tier, or with S4_INGEST=kafka 202 once Kafka acknowledged it (all in-sync replicas) and the ingest role will write it. Same series and timestamp again: the last write wins.',
  operationId: 'WriteController_write',
  tags: ['write'],
  parameters: [],
  requestBody: {
    required: true,
    content: Object.fromEntries(['application/json', 'application/x-ndjson', 'application/msgpack'].map((t) => [t, { schema: WRITE_BODY_SCHEMA }])),
  },
  responses: {
    '202': { description: 'S4_INGEST=kafka: every sample is durable in Kafka; queryable once the ingest role wrote it (see the lag in GET /v1/admin/shards)' },
    '204': { description: 'Every sample is durable in the hot tier' },
    '400': { description: 'Malformed request or limit exceeded; nothing was written', content: { 'application/json': { schema: ERROR_SCHEMA } } },
    '413': { description: 'Body, sample count or record size over its limit; nothing was written', content: { 'application/json': { schema: ERROR_SCHEMA } } },
    '429': {
      description: 'A namespace limit (new series beyond maxActiveSeries or maxNewSeriesPerMinute, maxSamplesPerSecond) refused the request; nothing was written',
      content: { 'application/json': { schema: ERROR_SCHEMA } },
    },
    '503': { description: 'A store (hot tier, or Kafka in kafka mode) did not answer in time; retry after Retry-After seconds', content: { 'application/json': { schema: ERROR_SCHEMA } } },
  },
};
