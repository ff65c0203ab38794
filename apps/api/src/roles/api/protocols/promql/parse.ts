import type { SyntaxNode } from '@lezer/common';
import { parser } from '@prometheus-io/lezer-promql';
import { S4Error } from '@s4/core';
import type { Matcher } from '../select.js';

/** The functions over a range of samples S4 evaluates. */
export const RANGE_FUNCTIONS = ['avg_over_time', 'min_over_time', 'max_over_time', 'sum_over_time', 'count_over_time', 'last_over_time', 'rate', 'increase'] as const;
export type RangeFunction = (typeof RANGE_FUNCTIONS)[number];
export const AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'count'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export interface SelectorExpr {
  readonly kind: 'selector';
  readonly matchers: Matcher[];
  /** ms; the `offset` modifier. */
  readonly offset: number;
}
export interface RangeExpr {
  readonly kind: 'range';
  readonly fn: RangeFunction;
  readonly selector: SelectorExpr;
  /** ms; the `[5m]` of the range selector. */
  readonly range: number;
}
export interface AggregateExpr {
  readonly kind: 'aggregate';
  readonly op: Aggregation;
  /** Labels kept (`by`) or dropped (`without`); neither: all series are one group. */
  readonly grouping: { readonly mode: 'by' | 'without'; readonly labels: string[] } | null;
  readonly inner: Expr;
}
export interface NumberExpr {
  readonly kind: 'number';
  readonly value: number;
}
export type Expr = SelectorExpr | RangeExpr | AggregateExpr | NumberExpr;

/** PromQL S4 does not evaluate: answered 422 with the construct named. */
export class UnsupportedPromql extends S4Error {
  constructor(construct: string) {
    super('unsupported_promql', `${construct} is not supported by S4's PromQL subset (see docs/protocols.md)`, 422, { construct });
  }
}

/**
 * PromQL text → the subset S4 evaluates, parsed by the Prometheus project's own grammar
 * (@prometheus-io/lezer-promql). Supported: instant selectors with any matchers and `offset`;
 * the range functions above over `metric{...}[range]`; sum/avg/min/max/count, optionally
 * `by (...)` or `without (...)`, over any supported expression; number literals and arithmetic
 * between numbers (Grafana's `1+1` health check). Anything else is an UnsupportedPromql naming
 * what it met; a syntax error is a 400 naming the column.
 */
export function parsePromql(query: string): Expr {
  const tree = parser.parse(query);
  let syntaxError: number | undefined;
  tree.iterate({
    enter: (n) => {
      if (syntaxError === undefined && n.type.isError) syntaxError = n.from;
    },
  });
  if (syntaxError !== undefined) throw new S4Error('invalid_request', `PromQL syntax error at column ${syntaxError + 1}: ${JSON.stringify(query.slice(Math.max(0, syntaxError - 10), syntaxError + 10))}`, 400, { column: syntaxError + 1 });
  const top = tree.topNode.firstChild;
  if (!top) throw new S4Error('invalid_request', 'empty PromQL query', 400);
  return expr(top);

  function text(n: SyntaxNode): string {
    return query.slice(n.from, n.to);
  }

  function children(n: SyntaxNode): SyntaxNode[] {
    const out: SyntaxNode[] = [];
    for (let c = n.firstChild; c; c = c.nextSibling) out.push(c);
    return out;
  }

  function expr(n: SyntaxNode): Expr {
    switch (n.name) {
      case 'ParenExpr':
        return expr(n.firstChild!);
      case 'NumberDurationLiteral':
        return { kind: 'number', value: number(text(n)) };
      case 'VectorSelector':
        return selector(n, 0);
      case 'OffsetExpr':
        return offset(n);
      case 'FunctionCall':
        return call(n);
      case 'AggregateExpr':
        return aggregate(n);
      case 'BinaryExpr':
        return binary(n);
      case 'UnaryExpr': {
        const [op, arg] = children(n);
        const inner = expr(arg!);
        if (inner.kind === 'number') return { kind: 'number', value: text(op!) === '-' ? -inner.value : inner.value };
        throw new UnsupportedPromql(`unary ${text(op!)} on a vector`);
      }
      case 'MatrixSelector':
        throw new UnsupportedPromql('a range vector as the result (wrap it in a function such as rate or avg_over_time)');
      case 'SubqueryExpr':
        throw new UnsupportedPromql('a subquery');
      case 'StepInvariantExpr':
        throw new UnsupportedPromql('the @ modifier');
      case 'StringLiteral':
        throw new UnsupportedPromql('a string expression');
      default:
        throw new UnsupportedPromql(`${n.name} (${JSON.stringify(text(n))})`);
    }
  }

  function binary(n: SyntaxNode): Expr {
    const [l, op, r, ...rest] = children(n);
    if (rest.length > 0 || !l || !op || !r) throw new UnsupportedPromql(`the binary expression ${JSON.stringify(text(n))} with modifiers`);
    const a = expr(l);
    const b = expr(r);
    if (a.kind !== 'number' || b.kind !== 'number') throw new UnsupportedPromql(`the binary operator ${text(op)} between vectors`);
    const f = ARITHMETIC.get(text(op));
    if (!f) throw new UnsupportedPromql(`the binary operator ${text(op)}`);
    return { kind: 'number', value: f(a.value, b.value) };
  }

  function offset(n: SyntaxNode): Expr {
    const [inner, , dur] = children(n);
    const ms = duration(dur!, true);
    if (inner!.name === 'VectorSelector') return selector(inner!, ms);
    if (inner!.name === 'MatrixSelector') throw new UnsupportedPromql('a range vector as the result (wrap it in a function such as rate or avg_over_time)');
    throw new UnsupportedPromql(`offset on ${inner!.name}`);
  }

  function selector(n: SyntaxNode, offsetMs: number): SelectorExpr {
    const matchers: Matcher[] = [];
    for (const c of children(n)) {
      if (c.name === 'Identifier') matchers.push({ type: 'EQ', name: '__name__', value: text(c) });
      else if (c.name === 'LabelMatchers')
        for (const m of children(c)) {
          if (m.name === 'QuotedLabelName') matchers.push({ type: 'EQ', name: '__name__', value: string(m.firstChild!) });
          else if (m.name === 'UnquotedLabelMatcher' || m.name === 'QuotedLabelMatcher') {
            const [name, op, value] = children(m);
            const label = name!.name === 'QuotedLabelName' ? string(name!.firstChild!) : text(name!);
            const type = MATCH_OPS.get(text(op!));
            if (!type) throw new UnsupportedPromql(`the matcher ${text(op!)}`);
            matchers.push({ type, name: label, value: string(value!) });
          }
        }
    }
    return { kind: 'selector', matchers, offset: offsetMs };
  }

  function matrix(n: SyntaxNode, offsetMs = 0): { selector: SelectorExpr; range: number } {
    const [vs, dur] = children(n);
    if (vs!.name !== 'VectorSelector') throw new UnsupportedPromql(`a range over ${vs!.name}`);
    return { selector: selector(vs!, offsetMs), range: duration(dur!, false) };
  }

  function call(n: SyntaxNode): Expr {
    const [id, body] = children(n);
    const name = text(id!);
    if (!(RANGE_FUNCTIONS as readonly string[]).includes(name)) throw new UnsupportedPromql(`the function ${name}()`);
    const args = children(body!);
    if (args.length !== 1) throw new S4Error('invalid_request', `${name}() takes one range-vector argument, got ${args.length}`, 400);
    const arg = args[0]!;
    let m: { selector: SelectorExpr; range: number };
    if (arg.name === 'MatrixSelector') m = matrix(arg);
    else if (arg.name === 'OffsetExpr' && arg.firstChild?.name === 'MatrixSelector') {
      const [inner, , dur] = children(arg);
      m = matrix(inner!, duration(dur!, true));
    } else if (arg.name === 'SubqueryExpr') throw new UnsupportedPromql(`a subquery inside ${name}()`);
    else throw new S4Error('invalid_request', `${name}() expects a range vector such as metric[5m], got ${JSON.stringify(text(arg))}`, 400);
    return { kind: 'range', fn: name as RangeFunction, selector: m.selector, range: m.range };
  }

  function aggregate(n: SyntaxNode): Expr {
    let op = '';
    let grouping: AggregateExpr['grouping'] = null;
    let body: SyntaxNode | undefined;
    for (const c of children(n)) {
      if (c.name === 'AggregateOp') op = text(c);
      else if (c.name === 'AggregateModifier') {
        const [mode, labels] = children(c);
        grouping = { mode: text(mode!).toLowerCase() === 'by' ? 'by' : 'without', labels: labels ? children(labels).map((l) => (l.name === 'QuotedLabelName' ? string(l.firstChild!) : text(l))) : [] };
      } else if (c.name === 'FunctionCallBody') body = c;
    }
    if (!(AGGREGATIONS as readonly string[]).includes(op)) throw new UnsupportedPromql(`the aggregation ${op}`);
    const args = body ? children(body) : [];
    if (args.length !== 1) throw new S4Error('invalid_request', `${op}() takes one argument, got ${args.length}`, 400);
    return { kind: 'aggregate', op: op as Aggregation, grouping, inner: expr(args[0]!) };
  }

  function string(n: SyntaxNode): string {
    const t = text(n);
    if (t.startsWith('`')) return t.slice(1, -1);
    // Double- or single-quoted with Go escapes; JSON reads the double-quoted form.
    const body = t.slice(1, -1);
    const dq = t.startsWith("'") ? body.replaceAll('\\\'', "'").replaceAll('"', '\\"') : body;
    try {
      return JSON.parse(`"${dq}"`) as string;
    } catch {
      throw new S4Error('invalid_request', `PromQL string ${t} has an escape S4 cannot read`, 400);
    }
  }

  function duration(n: SyntaxNode, signed: boolean): number {
    const t = text(n).trim();
    if (signed && t.startsWith('-')) return -duration(n.lastChild!, false);
    const ms = parseDuration(t);
    if (ms === undefined) throw new UnsupportedPromql(`the duration expression ${JSON.stringify(t)}`);
    return ms;
  }
}

/** A `match[]` parameter: one series selector, no functions, no offset. */
export function parseSeriesSelector(text: string): Matcher[] {
  const e = parsePromql(text);
  if (e.kind !== 'selector' || e.offset !== 0) throw new S4Error('invalid_request', `match[] must be a series selector such as up{job="x"}, got ${JSON.stringify(text)}`, 400);
  return e.matchers;
}

const ARITHMETIC = new Map<string, (x: number, y: number) => number>([
  ['+', (x, y) => x + y],
  ['-', (x, y) => x - y],
  ['*', (x, y) => x * y],
  ['/', (x, y) => x / y],
  ['%', (x, y) => x % y],
  ['^', (x, y) => x ** y],
]);

const MATCH_OPS = new Map<string, Matcher['type']>([
  ['=', 'EQ'],
  ['!=', 'NEQ'],
  ['=~', 'RE'],
  ['!~', 'NRE'],
]);

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

/** `1h30m`, `90s`, `1.5` (seconds) → ms; undefined when it is not one. */
export function parseDuration(t: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  if (!/^(\d+(ms|s|m|h|d|w|y))+$/.test(t)) return undefined;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) ms += Number(n) * UNITS[unit!]!;
  return ms;
}

function number(t: string): number {
  const lower = t.toLowerCase();
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  const v = /^0x[0-9a-f]+$/i.test(t) ? parseInt(t, 16) : Number(t);
  if (Number.isNaN(v)) {
    const d = parseDuration(t);
    if (d !== undefined) return d / 1000;
    throw new S4Error('invalid_request', `${JSON.stringify(t)} is not a number`, 400);
  }
  return v;
}
