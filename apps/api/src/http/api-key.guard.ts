import { timingSafeEqual } from 'node:crypto';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { S4Error } from '@s4/core';

/** Paths every load balancer and scraper must reach without a key. */
const OPEN = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);

/**
 * When API keys are configured, every other request needs `Authorization: Bearer <key>`.
 * Comparison is constant-time so response timing does not leak key prefixes.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly keys: Buffer[];

  constructor(keys: readonly string[]) {
    this.keys = keys.map((k) => Buffer.from(k));
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.keys.length === 0) return true;
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    if (OPEN.has(req.url.split('?')[0]!)) return true;
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    if (this.keys.some((k) => k.length === given.length && timingSafeEqual(k, given))) return true;
    throw new S4Error('unauthorized', header ? 'the API key is not valid' : 'this server needs an API key: send Authorization: Bearer <key>', 401);
  }
}
