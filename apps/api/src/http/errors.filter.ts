import { randomUUID } from 'node:crypto';
import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { LimitError, S4Error, UnavailableError } from '@s4/core';

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown; id?: string };
}

/**
 * One place turns every failure into the API's error shape. Deliberate errors (S4Error) carry
 * their own status; anything else is a 500 whose id also appears in the log line.
 */
@Catch()
export class ErrorsFilter implements ExceptionFilter {
  private readonly log = new Logger('http');
  /** When each kind of outage was last logged: during one, every request fails the same way. */
  private readonly outageLogged = new Map<string, number>();

  constructor(private readonly maxBodyBytes: number) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const [status, body] = this.describe(error);
    if (reply.sent) return;
    // Clients back off by this header; the body says which store is down and why.
    if (error instanceof UnavailableError) {
      void reply.header('retry-after', String(error.retryAfterSeconds));
      this.logOutage(error);
    } else if (error instanceof LimitError && error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
  }

  /**
   * The answer names only the component; the cause (with addresses and the driver's words) is
   * for the operator, logged at most once per component and reason every 10 s.
   */
  private logOutage(error: UnavailableError): void {
    const kind = `${error.component}/${error.reason}`;
    const now = Date.now();
    if (now - (this.outageLogged.get(kind) ?? -Infinity) < 10_000) return;
    this.outageLogged.set(kind, now);
    const cause = error.cause instanceof Error ? error.cause.message : error.cause === undefined ? '' : String(error.cause);
    this.log.warn(`answering 503: ${error.message}${cause ? ` (${cause})` : ''}`);
  }

  private describe(error: unknown): [number, ErrorBody] {
    if (error instanceof S4Error) return [error.status, { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } }];
    const fastifyCode = (error as { code?: string }).code;
    if (fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return [413, { error: { code: 'limit_exceeded', message: `request body is larger than ${this.maxBodyBytes} bytes (limit S4_MAX_BODY_BYTES=${this.maxBodyBytes})`, details: { limit: 'S4_MAX_BODY_BYTES', max: this.maxBodyBytes } } }];
    if (fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return [415, { error: { code: 'unsupported_media_type', message: 'use Content-Type application/json, application/x-ndjson or application/msgpack' } }];
    if (fastifyCode === 'FST_ERR_CTP_EMPTY_JSON_BODY' || fastifyCode === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError)
      return [400, { error: { code: 'invalid_request', message: `body is not valid JSON: ${(error as Error).message}` } }];
    if (error instanceof HttpException) {
      const status = error.getStatus();
      // The Fastify adapter reports body-parser failures as HttpExceptions.
      if (status === 413) return this.describe({ code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
      if (status === 415) return this.describe({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
      if (status === 400) return [400, { error: { code: 'invalid_request', message: /JSON/i.test(error.message) ? `body is not valid JSON: ${error.message}` : error.message } }];
      return [status, { error: { code: status === 404 ? 'not_found' : `http_${status}`, message: error.message } }];
    }
    const statusCode = (error as { statusCode?: number }).statusCode;
    if (statusCode && statusCode >= 400 && statusCode < 500) return [statusCode, { error: { code: 'invalid_request', message: (error as Error).message } }];
    const id = randomUUID();
    this.log.error(`error ${id}: ${(error as Error)?.stack ?? String(error)}`);
    return [500, { error: { code: 'internal', message: `internal error ${id}; the server log has the details`, id } }];
  }
}
