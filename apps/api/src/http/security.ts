import type { FastifyInstance } from 'fastify';

/**
 * Headers every answer carries. The API serves data, not pages: nothing may be sniffed, framed or
 * cached by intermediaries, and no script or resource may load in its context. No CORS headers
 * are sent, so browsers on other origins cannot read answers (CORS is off).
 */
export function installSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (_req, reply, payload) => {
    void reply.header('x-content-type-options', 'nosniff');
    void reply.header('x-frame-options', 'DENY');
    void reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    void reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
    return payload;
  });
}
