/**
 * Errors the engine raises on purpose. Each carries a stable machine-readable code and the HTTP
 * status an API should answer with; the message says what was wrong and what to do next.
 */
export class S4Error extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface ValidationIssue {
  /** Where the problem is: `samples[3].ts`, `line 7: fields.value`, `query.from`. */
  path: string;
  message: string;
}

/** The request is malformed; nothing of it was written. */
export class ValidationError extends S4Error {
  constructor(readonly issues: ValidationIssue[]) {
    const head = issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join('; ');
    const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
    super('invalid_request', `invalid request: ${head}${more}`, 400, { issues });
  }
}

/** A configured limit was exceeded; nothing of the request was written. */
export class LimitError extends S4Error {
  constructor(
    readonly limit: string,
    readonly max: number,
    detail: string,
    status = 400,
    /** With 429: when the same request may succeed (sent as Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super('limit_exceeded', `${detail} (limit ${limit}=${max})`, status, retryAfterSeconds === undefined ? { limit, max } : { limit, max, retryAfterSeconds });
  }
}

/** A conditional object write lost its race (another writer changed the object first). */
export class PreconditionFailedError extends S4Error {
  constructor(key: string) {
    super('precondition_failed', `object ${key} was changed by another writer`, 409);
  }
}

/** A shard lease expired or was taken over; the holder must stop writing for that shard. */
export class LeaseLostError extends S4Error {
  constructor(shard: string, fence: number) {
    super('lease_lost', `lease on shard ${shard} with fence ${fence} is no longer held; another owner took over`, 409);
  }
}

/** Stored bytes fail their checksum or structure check. */
export class CorruptDataError extends S4Error {
  constructor(what: string, why: string) {
    super('corrupt_data', `${what} is corrupt: ${why}`, 500);
  }
}

/**
 * A store the request needs (hot tier, object store, ingest log) is down, full or too slow right
 * now. Nothing of the request was written (the ingest log: perhaps some shards' share, which a
 * retry writes again harmlessly); the same request may be retried after `retryAfterSeconds`.
 */
export class UnavailableError extends S4Error {
  constructor(
    readonly component: 'hot tier' | 'object store' | 'ingest log',
    what: string,
    readonly retryAfterSeconds = 5,
    readonly reason = 'unavailable',
  ) {
    super('unavailable', `${component} ${reason}: ${what}; retry after ${retryAfterSeconds} s`, 503, { component, reason, retryAfterSeconds });
  }
}
