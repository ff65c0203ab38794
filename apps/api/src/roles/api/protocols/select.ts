import { S4Error, own, type SeriesKey, type Tags } from '@s4/core';
import type { QueryEngine, SeriesResult } from '@s4/engine';

/** A Prometheus label matcher; `__name__` is S4's metric, every other label a tag. */
export interface Matcher {
  readonly type: 'EQ' | 'NEQ' | 'RE' | 'NRE';
  readonly name: string;
  readonly value: string;
}

/** Matchers compiled once: what the engine can filter by (metric, equal tags), and the whole test. */
export interface Selector {
  /** The metric when a `__name__="x"` matcher fixes it. */
  readonly metric: string | undefined;
  /** `label="value"` matchers with a non-empty value: the engine's own tag filter. */
  readonly tags: Tags;
  /** Every matcher, Prometheus' way: an absent label reads as "". */
  test(key: SeriesKey): boolean;
}

export const METRIC_LABEL = '__name__';

/**
 * Prometheus regular expressions are RE2, anchored at both ends. JavaScript's syntax agrees on
 * what PromQL users write (alternations, classes, repetition); a leading `(?i)` (RE2's flag
 * syntax) becomes the `i` flag.
 */
export function promRegex(source: string): RegExp {
  let flags = 'su';
  let body = source;
  if (body.startsWith('(?i)')) {
    flags += 'i';
    body = body.slice(4);
  }
  try {
    return new RegExp(`^(?:${body})$`, flags);
  } catch (e) {
    throw new S4Error('invalid_request', `regular expression ${JSON.stringify(source)} is not valid: ${(e as Error).message}`, 400);
  }
}

export function compileSelector(matchers: readonly Matcher[]): Selector {
  let metric: string | undefined;
  const tags = Object.create(null) as Record<string, string>;
  const tests: ((key: SeriesKey) => boolean)[] = [];
  let selective = false;
  for (const m of matchers) {
    const read = (key: SeriesKey) => (m.name === METRIC_LABEL ? key.metric : (own(key.tags, m.name) ?? ''));
    switch (m.type) {
      case 'EQ':
        if (m.name === METRIC_LABEL) metric = metric === undefined || metric === m.value ? m.value : '\u0000conflict';
        else if (m.value !== '') tags[m.name] = Object.hasOwn(tags, m.name) && tags[m.name] !== m.value ? '\u0000conflict' : m.value;
        tests.push((k) => read(k) === m.value);
        if (m.value !== '') selective = true;
        break;
      case 'NEQ':
        tests.push((k) => read(k) !== m.value);
        if (m.value === '') selective = true;
        break;
      case 'RE':
      case 'NRE': {
        const re = promRegex(m.value);
        const want = m.type === 'RE';
        tests.push((k) => re.test(read(k)) === want);
        if (re.test('') !== want) selective = true;
        break;
      }
    }
  }
  // Prometheus' own rule: a selector matching every series (e.g. {job=~".*"}) is refused.
  if (!selective) throw new S4Error('invalid_request', 'a series selector needs at least one matcher that does not match the empty string (e.g. a metric name)', 400);
  return { metric, tags, test: (k) => tests.every((t) => t(k)) };
}

/** The series the selector matches that have data in [from, to). */
export async function selectKeys(engine: QueryEngine, sel: Selector, from: number, to: number): Promise<SeriesKey[]> {
  return (await engine.series(sel.metric, sel.tags, from, to)).filter((k) => sel.test(k));
}

/**
 * Samples of the `value` field of every matching series over [from, to). The engine reads by
 * metric: with no `__name__="x"`, the metrics of the matching series are listed first (the
 * series listing; regular-expression matchers are applied here, not pushed into the engine).
 */
export async function* selectData(engine: QueryEngine, sel: Selector, from: number, to: number): AsyncGenerator<SeriesResult> {
  const metrics = sel.metric !== undefined ? [sel.metric] : [...new Set((await selectKeys(engine, sel, from, to)).map((k) => k.metric))].sort();
  for (const metric of metrics)
    for await (const r of engine.query({ metric, tags: sel.tags, from, to, fields: ['value'] })) if (sel.test(r)) yield r;
}

/** Labels of a series, Prometheus' way: `__name__` and the tags, sorted by name. */
export function labelsOf(key: SeriesKey): [string, string][] {
  return [[METRIC_LABEL, key.metric] as [string, string], ...Object.entries(key.tags)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
