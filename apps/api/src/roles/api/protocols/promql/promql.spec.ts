import { describe, expect, it } from 'vitest';
import { evaluate, stepTimes, type RawSeries } from './eval.js';
import { parseDuration, parsePromql, parseSeriesSelector, UnsupportedPromql, type Expr, type SelectorExpr } from './parse.js';
import { formatValue } from '../promql.controller.js';

/** Evaluates `query` over one series' samples at the given steps. */
function run(query: string, series: Omit<RawSeries, 'labels'>[], times: number[]) {
  const expr = parsePromql(query);
  const data = new Map<SelectorExpr, RawSeries[]>();
  const walk = (e: Expr): void => {
    if (e.kind === 'selector') data.set(e, series.map((s, i) => ({ labels: { __name__: 'm', i: String(i), job: i % 2 ? 'odd' : 'even' }, ...s })));
    else if (e.kind === 'range') data.set(e.selector, series.map((s, i) => ({ labels: { __name__: 'm', i: String(i), job: i % 2 ? 'odd' : 'even' }, ...s })));
    else if (e.kind === 'aggregate') walk(e.inner);
  };
  walk(expr);
  return evaluate(expr, times, data).map((s) => ({ labels: { ...s.labels }, values: s.values }));
}

describe('PromQL subset: parsing', () => {
  it('reads selectors, matchers, offsets, range functions and aggregations', () => {
    expect(parsePromql('up')).toEqual({ kind: 'selector', matchers: [{ type: 'EQ', name: '__name__', value: 'up' }], offset: 0 });
    expect(parsePromql('x{a!="b", c=~"d.*", "e.f"!~\'g\'} offset 5m')).toEqual({
      kind: 'selector',
      matchers: [
        { type: 'EQ', name: '__name__', value: 'x' },
        { type: 'NEQ', name: 'a', value: 'b' },
        { type: 'RE', name: 'c', value: 'd.*' },
        { type: 'NRE', name: 'e.f', value: 'g' },
      ],
      offset: 300_000,
    });
    expect(parsePromql('sum by (job) (rate(x[1m30s] offset 1h))')).toMatchObject({ kind: 'aggregate', op: 'sum', grouping: { mode: 'by', labels: ['job'] }, inner: { kind: 'range', fn: 'rate', range: 90_000, selector: { offset: 3_600_000 } } });
    expect(parsePromql('max(x) without (a, b)')).toMatchObject({ kind: 'aggregate', op: 'max', grouping: { mode: 'without', labels: ['a', 'b'] } });
    expect(parsePromql('(1 + 2) * 3')).toEqual({ kind: 'number', value: 9 });
    expect(parsePromql('-Inf')).toEqual({ kind: 'number', value: -Infinity });
    expect(parseSeriesSelector('{__name__=~"a|b"}')).toEqual([{ type: 'RE', name: '__name__', value: 'a|b' }]);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5')).toBe(1500);
    expect(parseDuration('5x')).toBeUndefined();
  });

  it('names the construct it does not support (422) and the column of a syntax error (400)', () => {
    const unsupported = (q: string) => {
      try {
        parsePromql(q);
      } catch (e) {
        expect(e).toBeInstanceOf(UnsupportedPromql);
        return (e as Error).message;
      }
      throw new Error(`${q} was accepted`);
    };
    expect(unsupported('topk(3, x)')).toMatch(/aggregation topk/);
    expect(unsupported('irate(x[5m])')).toMatch(/function irate\(\)/);
    expect(unsupported('x / y')).toMatch(/binary operator \/ between vectors/);
    expect(unsupported('x[5m]')).toMatch(/range vector as the result/);
    expect(unsupported('rate(x[5m:1m])')).toMatch(/subquery/);
    expect(unsupported('x @ 5')).toMatch(/@ modifier/);
    expect(() => parsePromql('x{')).toThrow(/syntax error at column/);
    expect(() => parsePromql('rate(x)')).toThrow(/expects a range vector/);
    expect(() => parseSeriesSelector('rate(x[1m])')).toThrow(/match\[\] must be a series selector/);
  });
});

describe('PromQL subset: evaluation (Prometheus 2.x semantics)', () => {
  const s = { ts: [0, 10_000, 20_000, 30_000], values: [1, 2, 3, 4] };

  it('an instant selector takes the latest sample at most 5 min old', () => {
    expect(run('m', [s], [0, 5_000, 30_000, 330_000, 330_001])[0]!.values).toEqual([1, 1, 4, 4, undefined]);
    expect(run('m offset 10s', [s], [10_000, 40_000])[0]!.values).toEqual([1, 4]);
  });

  it('range functions read [t - range, t], both ends included', () => {
    const at = (q: string) => run(q, [s], [30_000])[0]!.values[0];
    expect(at('count_over_time(m[20s])')).toBe(3);
    expect(at('sum_over_time(m[20s])')).toBe(9);
    expect(at('avg_over_time(m[20s])')).toBe(3);
    expect(at('min_over_time(m[20s])')).toBe(2);
    expect(at('max_over_time(m[20s])')).toBe(4);
    expect(at('last_over_time(m[20s])')).toBe(4);
    expect(run('count_over_time(m[5s])', [s], [25_000])[0]!.values).toEqual([1]);
    expect(run('count_over_time(m[4s])', [s], [25_000])[0]!.values).toEqual([undefined]);
  });

  it('rate and increase extrapolate as Prometheus does, counter resets included', () => {
    // Samples cover the whole 30 s window: increase is 3 over 30 s of samples, extrapolated by
    // the window's edges (start edge clipped at the counter's zero point).
    expect(run('increase(m[30s])', [s], [30_000])[0]!.values[0]).toBeCloseTo(3 * (30 + 0) / 30, 10);
    expect(run('rate(m[40s])', [s], [40_000])[0]!.values[0]).toBeCloseTo((3 * ((30 + 5 + 5) / 30)) / 40, 10);
    const reset = { ts: [0, 10_000, 20_000, 30_000], values: [5, 7, 1, 3] };
    expect(run('increase(m[30s])', [reset], [30_000])[0]!.values[0]).toBeCloseTo(3 - 5 + 7, 10);
    expect(run('rate(m[30s])', [{ ts: [30_000], values: [1] }], [30_000])[0]!.values).toEqual([undefined]);
  });

  it('aggregates by, without and over everything, dropping __name__', () => {
    const a = { ts: [0], values: [1] };
    const b = { ts: [0], values: [5] };
    const c = { ts: [0], values: [3] };
    expect(run('sum(m)', [a, b, c], [0])).toEqual([{ labels: {}, values: [9] }]);
    expect(run('avg by (job) (m)', [a, b, c], [0])).toEqual([
      { labels: { job: 'even' }, values: [2] },
      { labels: { job: 'odd' }, values: [5] },
    ]);
    expect(run('count without (i) (m)', [a, b, c], [0])).toEqual([
      { labels: { job: 'even' }, values: [2] },
      { labels: { job: 'odd' }, values: [1] },
    ]);
    expect(run('max(rate(m[1m]))', [s, s], [30_000])[0]!.labels).toEqual({});
    expect(run('min(m)', [a, { ts: [0], values: [NaN] }], [0])[0]!.values).toEqual([1]);
  });

  it('steps run start, start + step, ... up to end', () => {
    expect(stepTimes({ start: 0, end: 10, step: 3 })).toEqual([0, 3, 6, 9]);
  });

  it('formats values as Prometheus does (no exponent; NaN, +Inf, -Inf)', () => {
    expect([1e21, 1.5e-7, -2.5e22, 0.1, NaN, Infinity, -Infinity, 123].map(formatValue)).toEqual(['1000000000000000000000', '0.00000015', '-25000000000000000000000', '0.1', 'NaN', '+Inf', '-Inf', '123']);
  });
});
