import { UnavailableError } from '@s4/core';

/** Why S3 could not serve a call, as far as a caller needs to know. */
export type S3Fault = 'timeout' | 'unavailable' | 'throttled';

/** Seconds a caller should wait before trying again: a slow or throttling S3 needs longer than a reset connection. */
const RETRY_AFTER_S: Readonly<Record<S3Fault, number>> = { timeout: 5, unavailable: 2, throttled: 1 };

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const THROTTLING_NAMES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'BandwidthLimitExceeded',
  'ProvisionedThroughputExceededException',
]);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
  errors?: unknown;
}

/**
 * Classify a failed S3 call: a fault of the service or the network (worth retrying later) or null
 * for everything else (bad credentials, a missing bucket, a bug), which must surface as it is.
 */
export function s3Fault(e: unknown, depth = 0): S3Fault | null {
  if (typeof e !== 'object' || e === null || depth > 3) return null;
  const err = e as ErrorLike;
  const name = typeof err.name === 'string' ? err.name : '';
  const status = err.$metadata?.httpStatusCode;
  if (THROTTLING_NAMES.has(name) || status === 429) return 'throttled';
  if (TIMEOUT_NAMES.has(name)) return 'timeout';
  if (typeof err.code === 'string' && NETWORK_CODES.has(err.code)) return 'unavailable';
  if (status !== undefined && status >= 500) return 'unavailable';
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (Array.isArray(err.errors))
    for (const inner of err.errors as unknown[]) {
      const fault = s3Fault(inner, depth + 1);
      if (fault) return fault;
    }
  return err.cause ? s3Fault(err.cause, depth + 1) : null;
}

/** The error a caller gets for a failed call: UnavailableError (503) for faults, the original otherwise. */
export function objectStoreError(e: unknown, what: string): unknown {
  if (e instanceof UnavailableError) return e;
  const fault = s3Fault(e);
  if (!fault) return e;
  const err = new UnavailableError('object store', what, RETRY_AFTER_S[fault], fault);
  err.cause = e;
  return err;
}

export function timeoutError(what: string): UnavailableError {
  return new UnavailableError('object store', what, RETRY_AFTER_S.timeout, 'timeout');
}

export interface Attempt {
  readonly signal: AbortSignal;
  /** Call when the response headers arrive, with the body size still to come. */
  answered(bodyBytes: number): void;
}

export interface BoundedOptions {
  /** Until the first answer (response headers), all attempts and retries included. */
  readonly answerMs: number;
  /** After the first answer: time left for a body of this many bytes. */
  readonly bodyMs: (bytes: number) => number;
  /** Start a second attempt when there is no answer after this long; 0: never. */
  readonly hedgeAfterMs: number;
  readonly onTimeout: () => unknown;
}

/**
 * Run `attempt`, bounded in time, and hedged: when the first attempt has no answer after
 * `hedgeAfterMs`, a second identical one starts and whichever finishes first wins; the other is
 * aborted. At most two attempts ever run. The call fails when its budget runs out (all attempts
 * aborted) or when every attempt started has failed (the last error is the answer).
 */
export function bounded<T>(options: BoundedOptions, attempt: (a: Attempt) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const running = new Set<AbortController>();
    let started = 0;
    let failed = 0;
    let settled = false;
    let answered = false;
    let deadline: NodeJS.Timeout | undefined;
    let hedge: NodeJS.Timeout | undefined;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(hedge);
      // Only unfinished attempts are aborted: aborting a finished one would destroy its keep-alive socket.
      for (const c of running) c.abort();
      settle();
    };
    const arm = (ms: number) => {
      clearTimeout(deadline);
      deadline = setTimeout(() => finish(() => reject(options.onTimeout())), ms);
    };
    const launch = () => {
      const controller = new AbortController();
      running.add(controller);
      started++;
      const onAnswer = (bytes: number) => {
        if (answered || settled) return;
        answered = true;
        clearTimeout(hedge);
        arm(options.bodyMs(bytes));
      };
      Promise.resolve()
        .then(() => attempt({ signal: controller.signal, answered: onAnswer }))
        .then(
          (value) => {
            running.delete(controller);
            finish(() => resolve(value));
          },
          (error: unknown) => {
            running.delete(controller);
            failed++;
            // The other copy may still answer; a hedge not yet started is not waited for.
            if (failed < started) return;
            finish(() => reject(error));
          },
        );
    };
    arm(options.answerMs);
    launch();
    if (options.hedgeAfterMs > 0 && options.hedgeAfterMs < options.answerMs)
      hedge = setTimeout(() => {
        if (!answered && !settled) launch();
      }, options.hedgeAfterMs);
  });
}
