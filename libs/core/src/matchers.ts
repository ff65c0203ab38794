import { own, tagsMatch, type Tags } from './model.js';

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
  /**
   * Every value `accepts` is true for, when there are finitely many and the matcher names them
   * (`=`, a regex of literals like `a|b\.c`): an index looks each up instead of testing every value.
   */
  readonly literals?: readonly string[] | undefined;
  /** A literal every accepted non-empty value starts with ("" when none is known): an index narrows sorted values to it. */
  readonly prefix: string;
  /** A literal every accepted non-empty value ends with ("" when none is known): an index tests it before decoding a value. */
  readonly suffix?: string;
}

/** Longest regular expression a matcher may hold: they are run against every distinct value of a tag. */
export const MAX_MATCHER_REGEX = 1024;

/** Compiles matchers; throws a RangeError naming the matcher when a regular expression is invalid or too long. */
export function compileMatchers(matchers: readonly TagMatcher[] | undefined): CompiledMatcher[] {
  return (matchers ?? []).map((m) => {
    const regex = m.op === '=~' || m.op === '!~';
    if (!regex) return { ...m, negated: m.op === '!=', accepts: (v: string) => v === m.value, literals: [m.value], prefix: m.value };
    if (m.value.length > MAX_MATCHER_REGEX) throw new RangeError(`${m.key}${m.op}: the regular expression is longer than ${MAX_MATCHER_REGEX} characters`);
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${m.value})$`, 'u');
    } catch (e) {
      throw new RangeError(`${m.key}${m.op}${m.value}: not a valid regular expression (${(e as Error).message})`, { cause: e });
    }
    const negated = m.op === '!~';
    const literals = literalAlternatives(m.value);
    if (literals) {
      const set = new Set(literals);
      return { ...m, negated, accepts: (v: string) => set.has(v), literals, prefix: commonPrefix(literals) };
    }
    const { prefix, suffix } = literalEnds(m.value);
    // The literal ends are necessary conditions: testing them first spares the regex most values
    // a selective matcher refuses (host=~"host-[0-9]*00" refuses 99 % of hosts on their last byte).
    // "" never starts with a non-empty prefix, yet the regex may accept it (`(a.*)?`): ask it then.
    const accepts =
      prefix === '' && suffix === ''
        ? (v: string) => re.test(v)
        : (v: string) => (v === '' ? re.test(v) : v.length >= prefix.length + suffix.length && v.startsWith(prefix) && v.endsWith(suffix) && re.test(v));
    return { ...m, negated, accepts, prefix, suffix };
  });
}

/** Characters that stand for themselves in a regular expression (a conservative set). */
const PLAIN = /^[A-Za-z0-9_\-:/,=@#%&'"!~<>;` ]$/u;
/** Characters that may follow a backslash to stand for themselves in unicode mode (syntax characters and "/"). */
const ESCAPABLE = /^[\^$.*+?()[\]{}|/]$/u;

/**
 * The values a regex of plain alternatives (`a|b\.c|d`, no other syntax) accepts, or undefined
 * when it has any other syntax. "" is an alternative when the regex has an empty one (`a|`).
 */
export function literalAlternatives(source: string): string[] | undefined {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '|') {
      out.push(cur);
      cur = '';
    } else if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined || !ESCAPABLE.test(next)) return undefined;
      cur += next;
      i++;
    } else if (PLAIN.test(c)) cur += c;
    else return undefined;
  }
  out.push(cur);
  return [...new Set(out)];
}

/**
 * Literal text every match of the (anchored) regex starts and ends with: the plain characters
 * before its first piece of syntax, and after its last. Nothing when it has an alternation
 * outside any group (each branch may start differently). A character a quantifier follows is
 * not part of the prefix (`ab*` starts with "a").
 */
export function literalEnds(source: string): { prefix: string; suffix: string } {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return { prefix: '', suffix: '' };
  }
  let p = 0;
  while (p < source.length && PLAIN.test(source[p]!)) p++;
  if (p < source.length && '*+?{'.includes(source[p]!)) p--;
  const prefix = source.slice(0, Math.max(0, p));
  let s = source.length;
  // A character after a backslash is an escape (`\d`), not itself.
  while (s > p && PLAIN.test(source[s - 1]!) && source[s - 2] !== '\\') s--;
  return { prefix, suffix: source.slice(s) };
}

function commonPrefix(values: readonly string[]): string {
  if (values.length === 0) return '';
  let p = values[0]!;
  for (const v of values) while (!v.startsWith(p)) p = p.slice(0, -1);
  return p;
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

/** What every query names of the series it wants: tag equalities and matchers. */
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

/**
 * The tag = value pairs every selected series holds: the selector's tags, and its `=` matchers
 * of a non-empty value (an empty one also selects series without the tag). A store can test
 * these on its own representation of a key before building the key.
 */
export function requiredPairs(selector: TagSelector): [string, string][] {
  const out = Object.entries(selector.tags);
  for (const m of selector.matchers ?? []) if (m.op === '=' && m.value !== '') out.push([m.key, m.value]);
  return out;
}

/** True when the selector names no condition, so every series of its metric is selected. */
export function selectsAll(selector: TagSelector): boolean {
  return Object.keys(selector.tags).length === 0 && (selector.matchers?.length ?? 0) === 0;
}
