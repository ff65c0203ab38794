import type { FastifyInstance } from 'fastify';
import { CONSOLE_CSP, CONSOLE_PATH } from './console.js';

/**
 * Headers every answer carries. The API serves data, not pages: nothing may be sniffed, framed or
 * cached by intermediaries, and no script or resource may load in its context. No CORS headers
 * are sent, so browsers on other origins cannot read answers (CORS is off). The console's pages
 * (/ui) may load their own scripts and styles and call this origin's API, nothing else.
 */
export function installSecurityHeaders(fastify: FastifyInstance): void {
  // A callback hook: an async one is a promise and a microtask turn more on every answer.
  fastify.addHook('onSend', (req, reply, payload, done) => {
    void reply.header('x-content-type-options', 'nosniff');
    void reply.header('x-frame-options', 'DENY');
    const page = req.url === CONSOLE_PATH || req.url.startsWith(`${CONSOLE_PATH}/`);
    void reply.header('content-security-policy', page ? CONSOLE_CSP : "default-src 'none'; frame-ancestors 'none'");
    void reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}
