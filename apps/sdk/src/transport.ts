import { S4DecodeError, S4Error, S4HttpError, S4NetworkError, S4TimeoutError } from './errors.js';
import { backoffDelay, sleep, type RetryPolicy } from './retry.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Reported before each retry, e.g. to log or count them. */
export interface RetryEvent {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  error: S4Error;
  method: string;
  path: string;
}

export interface TransportOptions {
  url: string;
  headers: Record<string, string>;
  fetch: FetchLike;
  timeoutMs: number;
  retry: RetryPolicy;
  onRetry: ((event: RetryEvent) => void) | undefined;
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: URLSearchParams;
  body?: Uint8Array | string;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** Called before each retry of this request, after the client-wide `onRetry`. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Fail on the first error (health probes). */
  noRetry?: boolean;
}

/** A response whose status was 2xx. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

/**
 * HTTP with timeouts, typed errors and retries. Every S4 request is idempotent (writes keep the
 * last value per series and timestamp), so every retryable failure is retried.
 */
export class Transport {
  readonly #o: TransportOptions;

  constructor(options: TransportOptions) {
    this.#o = options;
  }

  /** Sends a request and reads the whole answer body; the timeout covers both. */
  request(spec: RequestSpec): Promise<Answer> {
    return this.#withRetry(spec, async (response) => ({
      status: response.status,
      headers: response.headers,
      body: new Uint8Array(await response.arrayBuffer()),
    }));
  }

  /**
   * Sends a request and returns as soon as the headers are in; the caller reads the body (the
   * timeout stops at the headers, so a long export is not cut off). Retried only up to then.
   */
  open(spec: RequestSpec): Promise<Response> {
    return this.#withRetry(spec, (response) => Promise.resolve(response), true);
  }

  async #withRetry<T>(spec: RequestSpec, read: (response: Response) => Promise<T>, streaming = false): Promise<T> {
    const { retry } = this.#o;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt(spec, read, streaming);
      } catch (thrown) {
        const error = thrown instanceof RetryAfter ? thrown.error : thrown;
        if (!(error instanceof S4Error) || !error.retryable || spec.noRetry === true || attempt >= retry.retries) throw error;
        const delayMs = backoffDelay(attempt, retry, thrown instanceof RetryAfter ? thrown.retryAfterMs : undefined);
        const event: RetryEvent = { attempt: attempt + 1, delayMs, error, method: spec.method, path: spec.path };
        this.#o.onRetry?.(event);
        spec.onRetry?.(event);
        await sleep(delayMs, spec.signal);
      }
    }
  }

  async #attempt<T>(spec: RequestSpec, read: (response: Response) => Promise<T>, streaming: boolean): Promise<T> {
    const url = this.#o.url + spec.path + (spec.query && [...spec.query].length > 0 ? `?${spec.query.toString()}` : '');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#o.timeoutMs);
    const onAbort = (): void => controller.abort(spec.signal?.reason);
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    let keepListening = false; // a streamed body stays cancellable through the caller's signal
    try {
      spec.signal?.throwIfAborted();
      let response: Response;
      try {
        const init: RequestInit = { method: spec.method, headers: { ...this.#o.headers, ...spec.headers }, signal: controller.signal };
        if (spec.body !== undefined) init.body = spec.body as NonNullable<RequestInit['body']>;
        response = await this.#o.fetch(url, init);
      } catch (error) {
        throw this.#networkError(error, spec, timedOut);
      }
      if (!response.ok) {
        const httpError = await readHttpError(response, spec.method, url).catch((error: unknown) => {
          throw this.#networkError(error, spec, timedOut);
        });
        const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
        throw retryAfterMs === undefined || !httpError.retryable ? httpError : new RetryAfter(httpError, retryAfterMs);
      }
      if (streaming) {
        clearTimeout(timer);
        keepListening = true;
        return await read(response);
      }
      try {
        return await read(response);
      } catch (error) {
        throw error instanceof S4Error ? error : this.#networkError(error, spec, timedOut);
      }
    } catch (error) {
      throw error instanceof RetryAfter || error instanceof S4Error ? error : this.#networkError(error, spec, timedOut);
    } finally {
      clearTimeout(timer);
      if (!keepListening) spec.signal?.removeEventListener('abort', onAbort);
    }
  }

  #networkError(error: unknown, spec: RequestSpec, timedOut: boolean): unknown {
    if (error instanceof S4Error) return error;
    if (spec.signal?.aborted) return spec.signal.reason; // the caller cancelled: not ours to wrap or retry
    const where = `${spec.method} ${this.#o.url}${spec.path}`;
    if (timedOut) return new S4TimeoutError(`${where} got no answer within ${this.#o.timeoutMs} ms`, error);
    return new S4NetworkError(`${where} failed: ${describeCause(error)}; is the server running and the URL right?`, error);
  }
}

/** Carries a retryable HTTP error with the server's Retry-After hint; unwrapped before the caller sees it. */
class RetryAfter extends S4Error {
  readonly error: S4HttpError;
  readonly retryAfterMs: number;

  constructor(error: S4HttpError, retryAfterMs: number) {
    super(error.message, { retryable: true, cause: error });
    this.error = error;
    this.retryAfterMs = retryAfterMs;
  }
}

async function readHttpError(response: Response, method: string, url: string): Promise<S4HttpError> {
  const text = await response.text();
  let code = `http_${response.status}`;
  let message = response.statusText || 'error';
  let details: unknown;
  let errorId: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown; id?: unknown } };
    const e = parsed.error;
    if (e !== undefined && typeof e === 'object') {
      if (typeof e.code === 'string') code = e.code;
      if (typeof e.message === 'string') message = e.message;
      details = e.details;
      if (typeof e.id === 'string') errorId = e.id;
    }
  } catch {
    if (text.trim() !== '') message = text.trim().slice(0, 200);
  }
  return new S4HttpError({ status: response.status, code, message, details, errorId, method, url });
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function describeCause(error: unknown): string {
  // undici wraps the system error: TypeError('fetch failed', { cause: Error('connect ECONNREFUSED ...') })
  const cause = (error as { cause?: unknown } | null)?.cause;
  const inner = cause instanceof Error ? cause : error instanceof Error ? error : undefined;
  const code = (inner as { code?: unknown } | undefined)?.code;
  const text = inner?.message ?? String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code} ${text}` : text;
}

export function decodeJson<T>(answer: Answer, what: string): T {
  try {
    return JSON.parse(new TextDecoder().decode(answer.body)) as T;
  } catch (error) {
    throw new S4DecodeError(`${what}: the server's answer is not JSON`, { cause: error });
  }
}
