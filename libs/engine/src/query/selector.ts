import { compileMatchers, matchersMatch, tagsMatch, type CompiledMatcher, type TagMatcher, type Tags } from '@s4/core';

/** What every query names of the series it wants: tag equalities and matchers (matchers.ts). */
export interface TagSelector {
  readonly tags: Tags;
  readonly matchers?: readonly TagMatcher[] | undefined;
}

const compiled = new WeakMap<readonly TagMatcher[], CompiledMatcher[]>();
const NONE: CompiledMatcher[] = [];

/** The selector's matchers, compiled once per selector (a query tests them against many series). */
export function matchersOf(selector: TagSelector): CompiledMatcher[] {
  const m = selector.matchers;
  if (!m || m.length === 0) return NONE;
  let c = compiled.get(m);
  if (!c) compiled.set(m, (c = compileMatchers(m)));
  return c;
}

/** True when a series with these tags is selected: every tag equality and every matcher holds. */
export function selects(selector: TagSelector, tags: Tags): boolean {
  return tagsMatch(tags, selector.tags) && matchersMatch(tags, matchersOf(selector));
}
