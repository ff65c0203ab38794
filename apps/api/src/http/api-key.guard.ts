import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { S4Error } from '@s4/core';
import { KeyRing, RateLimiter, type Scope } from '../auth/keys.js';

/** Paths load balancers (and Influx clients' /ping) must reach without a key. */
const ALWAYS_OPEN = new Set(['/healthz', '/readyz', '/ping']);
/** Write endpoints of the protocols S4 speaks besides its own (Influx, Prometheus remote write). */
const PROTOCOL_WRITES = new Set(['/write', '/api/v2/write', '/api/v1/write']);
/** Read endpoints of the protocols (Prometheus remote read and query API, Graphite render). */
const PROTOCOL_READS = new Set(['/api/v1/read', '/api/v1/query', '/api/v1/query_range', '/api/v1/series', '/api/v1/labels', '/api/v1/metadata', '/api/v1/status/buildinfo', '/render', '/metrics/find']);
/** Paths scrapers and tools read; open without a key only when configured so. */
const METRICS = new Set(['/metrics', '/openapi.json']);

/** The scope a path needs (/metrics and /openapi.json: any valid key). */
function scopeOf(path: string, method: string): Scope | null {
  if (METRICS.has(path)) return null;
  // Deleting series (DELETE /v1/series) is an admin's act, whatever the path reads otherwise.
  if (method === 'DELETE') return 'admin';
  return scopeOfData(path);
}

/** The scope a path needs. Anything not listed needs admin: a new endpoint is closed by default. */
function scopeOfData(path: string): Scope {
  if (path === '/v1/write' || PROTOCOL_WRITES.has(path)) return 'write';
  if (path === '/v1/query' || path === '/v1/latest' || path === '/v1/series') return 'read';
  if (PROTOCOL_READS.has(path) || /^\/api\/v1\/label\/[^/]+\/values$/.test(path)) return 'read';
  return 'admin';
}

/**
 * The key a request presents: `Bearer <key>`, Influx 2's `Token <key>`, or Basic auth whose
 * password is the key (the influx 1.x CLI, Telegraf, Grafana and Prometheus' basic_auth send
 * that; the user name is ignored).
 */
function presented(header: string): string | undefined {
  if (header.startsWith('Bearer ')) return header.slice(7);
  if (header.startsWith('Token ')) return header.slice(6);
  if (header.startsWith('Basic ')) {
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  }
  return undefined;
}

export interface GuardOptions {
  readonly keys: KeyRing;
  readonly namespace: string;
  readonly publicMetrics: boolean;
  readonly limiter?: RateLimiter;
}

/**
 * With keys configured, every request but health and readiness needs `Authorization: Bearer
 * <key>`: 401 when the key is missing or unknown, 403 when it lacks the scope or namespace the
 * endpoint needs, 429 with Retry-After when the key is over its rate. Keys are compared by their
 * SHA-256 (see KeyRing), never kept or logged in the clear.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly limiter: RateLimiter;

  constructor(private readonly options: GuardOptions) {
    this.limiter = options.limiter ?? new RateLimiter();
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    this.check(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
    return true;
  }

  /** The guard for a route outside Nest (write.route.ts): throws as `authorize`, with Retry-After set on a 429. */
  check(req: FastifyRequest, reply: FastifyReply): void {
    try {
      this.authorize(req.url, req.headers.authorization, req.method);
    } catch (e) {
      const wait = (e as S4Error).details as { retryAfterSeconds?: number } | undefined;
      if (wait?.retryAfterSeconds) void reply.header('retry-after', String(wait.retryAfterSeconds));
      throw e;
    }
  }

  /** Throws the S4Error a request with this URL and Authorization header deserves, if any. */
  authorize(url: string, authorization: string | undefined, method = 'GET'): void {
    const { keys, namespace, publicMetrics } = this.options;
    if (!keys.enabled) return;
    const path = url.split('?')[0]!;
    if (ALWAYS_OPEN.has(path) || (publicMetrics && METRICS.has(path))) return;
    const header = authorization ?? '';
    if (!header) throw new S4Error('unauthorized', 'this server needs an API key: send Authorization: Bearer <key> (or Token <key>, or Basic auth with the key as password)', 401);
    const key = keys.find(presented(header) ?? '');
    if (!key) throw new S4Error('unauthorized', 'the API key is not valid', 401);
    const scope = scopeOf(path, method);
    if (scope && !key.scopes.has(scope)) throw new S4Error('forbidden', `key ${key.id} may ${[...key.scopes].join(', ')} but ${path} needs ${scope}`, 403, { key: key.id, needs: scope });
    if (!key.namespaces.has('*') && !key.namespaces.has(namespace))
      throw new S4Error('forbidden', `key ${key.id} may not use namespace ${namespace}`, 403, { key: key.id, namespace });
    const wait = this.limiter.take(key);
    if (wait > 0) throw new S4Error('rate_limited', `key ${key.id} is over its rate of ${key.ratePerSecond} requests/s; retry after ${wait} s`, 429, { key: key.id, retryAfterSeconds: wait });
  }
}
