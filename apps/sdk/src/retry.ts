/** How failed requests are retried: exponential backoff with full jitter. */
export interface RetryOptions {
  /** Retries after the first attempt; 0 disables retrying. Default 10. */
  retries?: number;
  /** Backoff base: the n-th retry waits a random time in [0, min(maxDelayMs, minDelayMs * 2^n)). Default 100. */
  minDelayMs?: number;
  /** Upper bound of one wait. Default 10 000. */
  maxDelayMs?: number;
}

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 10, minDelayMs: 100, maxDelayMs: 10_000 };

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...DEFAULT_RETRY, retries: 0 };
  return { ...DEFAULT_RETRY, ...options };
}

/**
 * Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): spreads retries of many
 * clients evenly instead of having them hit a recovering server in waves. A server's Retry-After
 * is honoured as a lower bound, capped at `maxDelayMs`.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** attempt);
  const jittered = random() * ceiling;
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, policy.maxDelayMs));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
