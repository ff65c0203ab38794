import type { FastifyInstance } from 'fastify';
import { urgentWork } from '@s4/core';

/**
 * Writes are bulk work on the HTTP thread (checked, encoded and applied in slices); every other
 * request (a query, a health check, an admin call) is urgent: while one is in flight, slices of
 * writes wait for it (bounded, see libs/core turns.ts). The paths of every ingest endpoint:
 * /v1/write, Influx /write and /api/v2/write, Prometheus remote write.
 */
const WRITE_PATHS = new Set(['/v1/write', '/write', '/api/v2/write', '/api/v1/write']);

export function installPrecedence(fastify: FastifyInstance): void {
  // A callback hook: an async one is a promise and a microtask turn more on every request.
  fastify.addHook('onRequest', (req, reply, done) => {
    const q = req.url.indexOf('?');
    if (!WRITE_PATHS.has(q < 0 ? req.url : req.url.slice(0, q))) reply.raw.once('close', urgentWork());
    done();
  });
}
