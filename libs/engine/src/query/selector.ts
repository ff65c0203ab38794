// The selector lives in @s4/core: the hot tiers filter their scans with it too.
import type { TagSelector } from '@s4/core';
export { matchersOf, selects, type TagSelector } from '@s4/core';

const keys = new WeakMap<object, string>();

/**
 * A selector's metric, tags and matchers as one string, the same for equal selectors whatever
 * their order: the key under which what a selector picked from an immutable object (a series
 * index, a footer) is kept for the next query that asks the same. Made once per selector object.
 */
export function selectorKey(selector: TagSelector & { readonly metric: string | undefined }): string {
  let key = keys.get(selector);
  if (key === undefined) {
    const tags = Object.entries(selector.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const matchers = (selector.matchers ?? []).map((m) => [m.key, m.op, m.value]);
    keys.set(selector, (key = JSON.stringify([selector.metric ?? null, tags, matchers])));
  }
  return key;
}
