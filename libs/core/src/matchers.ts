import { own, type Tags } from './model.js';

/** The tag matchers of a selector, with Prometheus' meaning (below). */
export const MATCH_OPS = ['=', '!=', '=~', '!~'] as const;
export type MatchOp = (typeof MATCH_OPS)[number];

/**
 * One tag condition. A series without the tag is matched as if its value were the empty string
 * (as in Prometheus): `k!="v"` and `k!~"re"` match series without `k`, `k=~".*"` matches every
 * series, `k=""` matches only series without `k` (S4 tag values are never empty).
 * Regular expressions are anchored at both ends and use JavaScript syntax.
 */
export interface TagMatcher {
  readonly key: string;
  readonly op: MatchOp;
  readonly value: string;
}

/** A matcher ready to test values: the regular expression compiled once. */
export interface CompiledMatcher extends TagMatcher {
  /** True when a tag value (or "" for a series without the tag) satisfies the positive form of `op` (= or =~). */
  readonly accepts: (value: string) => boolean;
  /** `!=` and `!~`: the series matches when `accepts` is false. */
  readonly negated: boolean;
}

/** Longest regular expression a matcher may hold: they are run against every distinct value of a tag. */
export const MAX_MATCHER_REGEX = 1024;

/** Compiles matchers; throws a RangeError naming the matcher when a regular expression is invalid or too long. */
export function compileMatchers(matchers: readonly TagMatcher[] | undefined): CompiledMatcher[] {
  return (matchers ?? []).map((m) => {
    const regex = m.op === '=~' || m.op === '!~';
    if (!regex) return { ...m, negated: m.op === '!=', accepts: (v: string) => v === m.value };
    if (m.value.length > MAX_MATCHER_REGEX) throw new RangeError(`${m.key}${m.op}: the regular expression is longer than ${MAX_MATCHER_REGEX} characters`);
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${m.value})$`, 'u');
    } catch (e) {
      throw new RangeError(`${m.key}${m.op}${m.value}: not a valid regular expression (${(e as Error).message})`, { cause: e });
    }
    return { ...m, negated: m.op === '!~', accepts: (v: string) => re.test(v) };
  });
}

/** True when the series' tags satisfy every matcher. */
export function matchersMatch(tags: Tags, matchers: readonly CompiledMatcher[]): boolean {
  for (const m of matchers) if (m.accepts(own(tags, m.key) ?? '') === m.negated) return false;
  return true;
}

/** `host=~"web-.*"`, as a matcher is written in messages and docs. */
export function formatMatcher(m: TagMatcher): string {
  return `${m.key}${m.op}${JSON.stringify(m.value)}`;
}
