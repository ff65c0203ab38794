import { describe, expect, it } from 'vitest';
import { LeaseLostError, UnavailableError } from '@s4/core';
import { hotTierError, hotTierFault } from './faults.js';

describe('hotTierFault', () => {
  it('tells server and connection faults from everything else', () => {
    expect(hotTierFault(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBe('full');
    expect(hotTierFault(new Error("OOM command not allowed when used memory > 'maxmemory'. script: 9fbc, on @user_script:8."))).toBe('full');
    expect(hotTierFault(new Error('Command timed out'))).toBe('timeout');
    expect(hotTierFault(new Error('LOADING Redis is loading the dataset in memory'))).toBe('unavailable');
    expect(hotTierFault(new Error('BUSY Redis is busy running a script.'))).toBe('unavailable');
    expect(hotTierFault(new Error("READONLY You can't write against a read only replica."))).toBe('unavailable');
    expect(hotTierFault(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe('unavailable');
    expect(hotTierFault(Object.assign(new Error('Reached the max retries per request limit (which is 0).'), { name: 'MaxRetriesPerRequestError' }))).toBe('unavailable');
    expect(hotTierFault(Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:6379'), { code: 'ECONNREFUSED' }))).toBe('unavailable');
    expect(hotTierFault(new Error('ERR Error running script: attempt to index a nil value'))).toBeNull();
    expect(hotTierFault(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBeNull();
    expect(hotTierFault('OOM')).toBeNull();
  });

  it('answers faults as UnavailableError and leaves a lost lease alone', () => {
    const e = hotTierError(new Error("OOM command not allowed when used memory > 'maxmemory'."), 'appending samples');
    expect(e).toBeInstanceOf(UnavailableError);
    expect(e).toMatchObject({ status: 503, component: 'hot tier', reason: 'full', retryAfterSeconds: 30 });
    expect((e as Error).message).toBe('hot tier full: appending samples; retry after 30 s');
    const lost = new LeaseLostError('ns/1', 3);
    expect(hotTierError(lost, 'releasing flushed samples')).toBe(lost);
    const bug = new Error('ERR unknown command');
    expect(hotTierError(bug, 'x')).toBe(bug);
  });
});
