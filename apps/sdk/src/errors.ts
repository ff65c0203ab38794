/** One problem with a request or a sample; `path` names the offending part, e.g. `samples[3].ts`. */
export interface Issue {
  path: string;
  message: string;
}

/** Base class of every error the SDK throws, so `catch (e) { if (e instanceof S4Error) ... }` works. */
export class S4Error extends Error {
  /** True when repeating the same call may succeed (the SDK already retried it). */
  readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options?.retryable ?? false;
  }
}

/** The server answered with an error status. `code` is the server's machine-readable code. */
export class S4HttpError extends S4Error {
  readonly status: number;
  /** e.g. `invalid_request`, `limit_exceeded`, `not_found`, `not_ready`, `internal`. */
  readonly code: string;
  readonly details: unknown;
  /** Error id of a 500, also written in the server's log line: quote it when reporting a bug. */
  readonly errorId: string | undefined;

  constructor(init: { status: number; code: string; message: string; details?: unknown; errorId?: string | undefined; method: string; url: string }) {
    const where = `${init.method} ${init.url}`;
    const id = init.errorId === undefined ? '' : ` (error id ${init.errorId})`;
    super(`${where} answered ${init.status} ${init.code}: ${init.message}${id}`, { retryable: isRetryableStatus(init.status) });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.errorId = init.errorId;
  }

  /** The per-field problems of an `invalid_request`, empty otherwise. */
  get issues(): Issue[] {
    const issues = (this.details as { issues?: unknown } | undefined)?.issues;
    return Array.isArray(issues) ? (issues as Issue[]) : [];
  }
}

/** The request never got an HTTP answer: connection refused or reset, DNS failure, TLS error. */
export class S4NetworkError extends S4Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause, retryable: true });
  }
}

/** No answer within `timeoutMs`; raise the client's `timeoutMs` for slow, large reads. */
export class S4TimeoutError extends S4NetworkError {}

/** A sample or request was rejected before sending; nothing was sent. */
export class S4ValidationError extends S4Error {
  readonly issues: Issue[];

  constructor(issues: Issue[]) {
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(first === undefined ? 'invalid input' : `invalid ${first.path}: ${first.message}${more}`);
    this.issues = issues;
  }
}

/** The server's answer could not be decoded: usually a proxy in between or a version mismatch. */
export class S4DecodeError extends S4Error {}

/**
 * A batching writer gave up on a batch (a non-retryable error, or retries exhausted). The writer
 * stops accepting samples; `cause` is the last error. Samples already acknowledged are stored;
 * since writes are idempotent, re-sending everything from the start is safe.
 */
export class S4WriteError extends S4Error {
  /** Samples that were not acknowledged (the failed batch plus everything still buffered). */
  readonly unsentSamples: number;

  constructor(cause: unknown, unsentSamples: number) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`write failed, ${unsentSamples} samples not stored: ${reason}`, { cause });
    this.unsentSamples = unsentSamples;
  }
}

/** `write()` on a writer after `close()`. */
export class S4ClosedError extends S4Error {}

/** 429, 502, 503, 504: the server or a proxy is overloaded or restarting. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}
