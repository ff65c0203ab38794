import { describe, expect, it } from 'vitest';
import type { Series } from './api.js';
import { Names, align, autoStep, errorCounters, fieldPaths, linesOf, pickPath, recordAt, seriesLabel } from './model.js';

describe('console model', () => {
  it('labels a series with its tags sorted', () => {
    expect(seriesLabel({ metric: 'cpu', tags: { z: '1', a: 'x' } })).toBe('cpu{a=x,z=1}');
    expect(seriesLabel({ metric: 'cpu', tags: {} })).toBe('cpu');
  });

  it('suggests prefix matches, then case-insensitive ones, then substrings, at most limit', () => {
    const names = new Names(['mem.used', 'cpu.user', 'cpu.sys', 'gpu.cpu', 'disk', 'Cpu.Nice', 'cpu.sys']);
    expect(names.size).toBe(6);
    expect(names.suggest('cpu', 10)).toEqual(['cpu.sys', 'cpu.user', 'Cpu.Nice', 'gpu.cpu']);
    expect(names.suggest('CPU', 2)).toEqual(['Cpu.Nice', 'cpu.sys']);
    expect(names.suggest('', 3)).toEqual(['Cpu.Nice', 'cpu.sys', 'cpu.user']);
    expect(names.suggest('zzz', 3)).toEqual([]);
    const many = new Names(Array.from({ length: 100_000 }, (_, i) => `host-${i}`));
    expect(many.suggest('host-9999', 5)).toEqual(['host-9999', 'host-99990', 'host-99991', 'host-99992', 'host-99993']);
    expect(many.suggest('99999', 5)).toEqual(['host-99999']);
  });

  it('lists dotted leaf paths and picks values by them', () => {
    const rec = { imu: { vibration: { rms: 1.5, peak: 3 }, temp: 20 }, sats: [1, 2], fw: null, empty: {} };
    expect(fieldPaths(rec)).toEqual(['empty', 'fw', 'imu.temp', 'imu.vibration.peak', 'imu.vibration.rms', 'sats']);
    const cols = { imu: [rec.imu, 'offline'] };
    expect(pickPath(cols, 'imu.vibration.rms', 0)).toBe(1.5);
    expect(pickPath(cols, 'imu.vibration.rms', 1)).toBeUndefined();
    expect(pickPath(cols, 'imu.__proto__', 0)).toBeUndefined();
  });

  it('makes numeric lines per series and path, and aligns them on one axis', () => {
    const s: Series[] = [
      { metric: 'm', tags: { h: 'a' }, ts: [1, 3], fields: { v: [1, 2], s: ['x', 'y'] } },
      { metric: 'm', tags: { h: 'b' }, ts: [2, 3], fields: { v: [5, null] } },
    ];
    const lines = linesOf(s);
    expect(lines.map((l) => l.label)).toEqual(['m{h=a} v', 'm{h=b} v']);
    expect(align(lines)).toEqual([[1, 2, 3], [1, null, 2], [null, 5, null]]);
    expect(recordAt(s[0]!, 1)).toMatchObject({ ts: 3, fields: { v: 2, s: 'y' } });
  });

  it('picks the finest step with at most one bucket per pixel column', () => {
    expect(autoStep(6 * 3_600_000, 1180)).toBe('30s');
    expect(autoStep(3_600_000, 1180)).toBe('5s');
    expect(autoStep(30 * 86_400_000, 1000)).toBe('1h');
    expect(autoStep(1000, 1000)).toBe('1s');
    expect(autoStep(1e12, 10)).toBe('7d');
  });

  it('finds the error counters of a /metrics page', () => {
    const text = ['# HELP x', 's4_flush_errors_total 2', 's4_query_requests_total{outcome="error"} 3', 's4_query_requests_total{outcome="ok"} 9', 's4_worker_thread_crashes_total{role="segment"} 1'].join('\n');
    expect([...errorCounters(text)]).toEqual([
      ['s4_flush_errors_total', 2],
      ['s4_query_requests_total{outcome="error"}', 3],
      ['s4_worker_thread_crashes_total{role="segment"}', 1],
    ]);
  });
});
