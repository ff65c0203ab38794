import type { Sample } from '@s4/sdk';
import { InputError } from './errors.js';

/** One NDJSON line (the layout of `s4 export --format ndjson`) → one sample; blank lines give null. */
export function parseNdjsonLine(text: string, line: number): Sample | null {
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(line, `invalid JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(line, 'expected a sample object {"metric","tags","ts","fields"}');
  const s = value as Partial<Sample>;
  if (typeof s.metric !== 'string' || typeof s.ts !== 'number' || s.fields === null || typeof s.fields !== 'object') {
    throw new InputError(line, 'expected a sample object {"metric","tags","ts","fields"}');
  }
  return s as Sample;
}
