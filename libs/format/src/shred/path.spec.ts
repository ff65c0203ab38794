import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nastyKey } from '../testing/arbitraries.js';
import { childPath, elementPath, escapeKey, formatProjectionPath, parseColumnPath, parseProjectionPath, selectPaths } from './path.js';

describe('column paths', () => {
  it('map every key sequence with array steps to one name and back', () => {
    const step = fc.oneof(nastyKey, fc.constant(null));
    fc.assert(
      fc.property(nastyKey, fc.array(step, { maxLength: 5 }), (field, steps) => {
        let path = escapeKey(field);
        for (const s of steps) path = s === null ? elementPath(path) : childPath(path, s);
        expect(parseColumnPath(path)).toEqual([field, ...steps]);
      }),
      { numRuns: 1000 },
    );
  });

  it('keep names apart that a naive join would confuse', () => {
    expect(childPath(escapeKey('a'), 'b.c')).toBe('a.b\\.c');
    expect(childPath(childPath(escapeKey('a'), 'b'), 'c')).toBe('a.b.c');
    expect(elementPath(escapeKey('a'))).toBe('a[]');
    expect(childPath(escapeKey('a'), '[]')).toBe('a.\\[\\]');
    expect(() => parseColumnPath('a[x')).toThrow(RangeError);
    expect(() => parseColumnPath('a]')).toThrow(RangeError);
    expect(() => parseColumnPath('a\\')).toThrow(RangeError);
  });
});

describe('projection paths', () => {
  it('split on unescaped dots and format back', () => {
    fc.assert(
      fc.property(fc.array(nastyKey, { minLength: 1, maxLength: 5 }), (keys) => {
        expect(parseProjectionPath(formatProjectionPath(keys))).toEqual(keys);
      }),
      { numRuns: 1000 },
    );
    expect(parseProjectionPath('imu.vibration')).toEqual(['imu', 'vibration']);
    expect(parseProjectionPath('a\\.b.c')).toEqual(['a.b', 'c']);
  });

  it('select a whole field by its exact name, and a whole value over deeper paths into it', () => {
    const sels = selectPaths(['imu.accel.x', 'imu.accel', 'cpu.user', 'sats.prn', 'sats.snr'], new Set(['cpu.user', 'imu', 'sats']));
    expect([...sels.keys()]).toEqual(['imu', 'cpu.user', 'sats']);
    expect(sels.get('imu')!.keys.get('accel')!.all).toBe(true);
    expect(sels.get('cpu.user')!.all).toBe(true);
    expect([...sels.get('sats')!.keys.keys()]).toEqual(['prn', 'snr']);
    expect(selectPaths(['a.b', 'a']).get('a')!.all).toBe(true);
  });
});
