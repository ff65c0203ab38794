import { describe, expect, it } from 'vitest';
import { UnavailableError } from '@s4/core';
import { bounded, objectStoreError, s3Fault, type Attempt } from './faults.js';

const sdkError = (name: string, status?: number, extra: object = {}) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, ...extra });

describe('s3Fault', () => {
  it('tells service and network faults from everything else', () => {
    expect(s3Fault(sdkError('SlowDown', 503))).toBe('throttled');
    expect(s3Fault(sdkError('TooManyRequests', 429))).toBe('throttled');
    expect(s3Fault(sdkError('InternalError', 500))).toBe('unavailable');
    expect(s3Fault(sdkError('ServiceUnavailable', 503))).toBe('unavailable');
    expect(s3Fault(sdkError('RequestTimeout', 400))).toBe('timeout');
    expect(s3Fault(Object.assign(new Error('socket timed out'), { name: 'TimeoutError' }))).toBe('timeout');
    expect(s3Fault(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }))).toBe('unavailable');
    expect(s3Fault(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'connect'))).toBe('unavailable');
    expect(s3Fault(Object.assign(new Error('aborted'), { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe('unavailable');
    // Configuration and caller errors must not pass for an outage.
    expect(s3Fault(sdkError('AccessDenied', 403))).toBeNull();
    expect(s3Fault(sdkError('NoSuchBucket', 404))).toBeNull();
    expect(s3Fault(sdkError('PreconditionFailed', 412))).toBeNull();
    expect(s3Fault(new TypeError('bug'))).toBeNull();
  });

  it('answers faults as UnavailableError naming the component, with the original as cause', () => {
    const cause = sdkError('SlowDown', 503);
    const e = objectStoreError(cause, 'reading an object');
    expect(e).toBeInstanceOf(UnavailableError);
    expect(e).toMatchObject({ status: 503, component: 'object store', reason: 'throttled', retryAfterSeconds: 1, cause });
    expect((e as Error).message).toBe('object store throttled: reading an object; retry after 1 s');
    const other = sdkError('AccessDenied', 403);
    expect(objectStoreError(other, 'reading an object')).toBe(other);
  });
});

describe('bounded', () => {
  const never = (a: Attempt) => new Promise<string>((_, reject) => a.signal.addEventListener('abort', () => reject(new Error('aborted'))));
  const after = (ms: number, value: string) => new Promise<string>((resolve) => setTimeout(() => resolve(value), ms));
  const options = { answerMs: 300, bodyMs: () => 300, hedgeAfterMs: 0, onTimeout: () => new Error('deadline') };

  it('fails at its deadline and aborts what still runs', async () => {
    const signals: AbortSignal[] = [];
    const started = performance.now();
    await expect(bounded(options, (a) => (signals.push(a.signal), never(a)))).rejects.toThrow('deadline');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(signals.map((s) => s.aborted)).toEqual([true]);
  });

  it('starts one hedge when the first attempt has no answer, takes the first result and aborts the other', async () => {
    const signals: AbortSignal[] = [];
    const got = await bounded({ ...options, hedgeAfterMs: 50 }, (a) => {
      signals.push(a.signal);
      return signals.length === 1 ? never(a) : after(10, 'second');
    });
    expect(got).toBe('second');
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
  });

  it('does not hedge once an answer arrived, and gives the body its own budget', async () => {
    let attempts = 0;
    const got = await bounded({ ...options, answerMs: 100, bodyMs: (bytes) => bytes, hedgeAfterMs: 20 }, async (a) => {
      attempts++;
      a.answered(400);
      return after(200, 'body');
    });
    expect(got).toBe('body');
    expect(attempts).toBe(1);
  });

  it('waits for the hedge when the first attempt fails after it started, and fails with the last error when both do', async () => {
    let n = 0;
    const got = await bounded({ ...options, hedgeAfterMs: 20 }, async () => {
      const i = ++n;
      if (i === 1) {
        await after(40, '');
        throw new Error('first');
      }
      return after(60, 'hedge');
    });
    expect(got).toBe('hedge');
    let m = 0;
    await expect(
      bounded({ ...options, hedgeAfterMs: 20 }, async () => {
        const i = ++m;
        await after(i === 1 ? 40 : 10, '');
        throw new Error(`attempt ${i}`);
      }),
    ).rejects.toThrow('attempt 1');
  });

  it('fails at once when the only attempt fails before a hedge is due', async () => {
    let attempts = 0;
    await expect(
      bounded({ ...options, hedgeAfterMs: 100 }, async () => {
        attempts++;
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await after(150, '');
    expect(attempts).toBe(1);
  });
});
