import { S4ValidationError, type Issue } from './errors.js';
import type { Sample } from './types.js';

/**
 * Catches the mistakes that would otherwise cost a round trip and fail a whole batch: a missing
 * metric, a timestamp that is not integer milliseconds (micro- or nanoseconds are the usual
 * culprits), a non-finite number. The server still validates everything else (limits, sizes).
 */
export function sampleIssues(sample: Sample, path: string): Issue[] {
  const issues: Issue[] = [];
  if (sample === null || typeof sample !== 'object') return [{ path, message: 'expected a sample object' }];
  if (typeof sample.metric !== 'string' || sample.metric === '') issues.push({ path: `${path}.metric`, message: 'expected a non-empty string' });
  if (sample.tags !== undefined) {
    if (sample.tags === null || typeof sample.tags !== 'object' || Array.isArray(sample.tags)) issues.push({ path: `${path}.tags`, message: 'expected an object of strings' });
    else for (const [k, v] of Object.entries(sample.tags)) if (typeof v !== 'string') issues.push({ path: `${path}.tags.${k}`, message: `expected a string, got ${typeof v}` });
  }
  if (!Number.isSafeInteger(sample.ts)) issues.push({ path: `${path}.ts`, message: `expected integer milliseconds since the epoch, got ${String(sample.ts)}` });
  else if (sample.ts > 1e14) issues.push({ path: `${path}.ts`, message: `${sample.ts} is after year 5000: microseconds? timestamps are milliseconds` });
  if (sample.fields === null || typeof sample.fields !== 'object' || Array.isArray(sample.fields)) issues.push({ path: `${path}.fields`, message: 'expected an object' });
  else {
    for (const [k, v] of Object.entries(sample.fields)) {
      if (typeof v === 'number' && !Number.isFinite(v)) issues.push({ path: `${path}.fields.${k}`, message: `${v} is not storable; use null for "no value"` });
      else if (typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') issues.push({ path: `${path}.fields.${k}`, message: `${typeof v} is not a field value` });
    }
  }
  return issues;
}

export function assertSamples(samples: readonly Sample[]): void {
  if (!Array.isArray(samples)) throw new S4ValidationError([{ path: 'samples', message: 'expected an array of samples' }]);
  let issues: Issue[] = [];
  for (let i = 0; i < samples.length && issues.length < 20; i++) {
    const found = sampleIssues(samples[i] as Sample, `samples[${i}]`);
    if (found.length > 0) issues = issues.concat(found);
  }
  if (issues.length > 0) throw new S4ValidationError(issues);
}
