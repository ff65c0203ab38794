import type { CompiledMatcher, Tags } from '@s4/core';
import type { IndexedPart, Postings, SeriesIndex } from '@s4/format';

/** A selector as the index answers it: a metric (any when undefined), tag equalities, matchers. */
export interface IndexSelector {
  readonly metric: string | undefined;
  readonly tags: Tags;
  readonly matchers: readonly CompiledMatcher[];
}

const EMPTY = new Uint32Array(0);
/**
 * Reading a series' tags from an index that decodes rows on demand, in value tests: its block of
 * rows and the string table's blocks of its values, against names the matcher already holds.
 */
const SERIES_READ_COST = 16;

/**
 * The ordinals (ascending) of the index's series the selector matches, from the postings alone:
 * the metric's list, intersected with each tag pair's list and each matcher's set. A matcher's
 * set is the union of the lists of the tag's values it accepts, plus the series without the tag
 * when it accepts "" (matchers.ts); negated matchers subtract that set.
 */
export function selectOrdinals(index: SeriesIndex, selector: IndexSelector): Uint32Array {
  let current: Uint32Array | null = selector.metric === undefined ? null : (index.metrics.get(selector.metric) ?? EMPTY);
  const all = () => Uint32Array.from({ length: index.series.length }, (_, i) => i);
  for (const [k, v] of Object.entries(selector.tags)) {
    current = intersect(current ?? all(), index.tags.get(k)?.get(v) ?? EMPTY);
    if (current.length === 0) return current;
  }
  for (const m of selector.matchers) {
    const values = index.tags.get(m.key);
    const candidates = values ? candidateValues(values, m) : [];
    if (current !== null && current.length * (index.series.onDemand ? SERIES_READ_COST : 1) < candidates.length) {
      // Fewer series left than values to test (one metric's series against a host tag with a
      // value per host): testing each series' own value is cheaper than testing every value
      // and merging their lists. Unless reading a series means decoding its rows' blocks.
      current = filterSeries(index, current, m);
      if (current.length === 0) return current;
      continue;
    }
    const lists: Uint32Array[] = [];
    if (values) for (const v of candidates) if (m.accepts(v)) lists.push(values.get(v)!);
    if (m.accepts('')) {
      // Series without the tag count as "": everything minus the series that carry it.
      lists.push(difference(all(), union(values ? [...values.values()] : [])));
    }
    const set = union(lists);
    current = m.negated ? difference(current ?? all(), set) : intersect(current ?? all(), set);
    if (current.length === 0) return current;
  }
  return current ?? all();
}

/** Per tag key's postings that do not keep their names in order (plain maps): its values sorted. */
const sortedValues = new WeakMap<ReadonlyMap<string, Uint32Array>, readonly string[]>();

/**
 * The values of a tag the matcher may accept ("" aside): the ones it names when it names them
 * all, else those with its literal prefix and suffix, else every value.
 */
function candidateValues(values: ReadonlyMap<string, Uint32Array>, m: CompiledMatcher): readonly string[] {
  if (m.literals) return m.literals.filter((v) => values.has(v));
  if ('withPrefix' in values) return (values as Postings).withPrefix(m.prefix, m.suffix);
  let sorted = sortedValues.get(values);
  if (!sorted) sortedValues.set(values, (sorted = [...values.keys()].sort()));
  return sorted.filter((v) => v.startsWith(m.prefix) && v.endsWith(m.suffix ?? ''));
}

/** The ordinals of `ordinals` whose series satisfies `m` (a series without the tag counts as ""). */
function filterSeries(index: SeriesIndex, ordinals: Uint32Array, m: CompiledMatcher): Uint32Array {
  const out = new Uint32Array(ordinals.length);
  let n = 0;
  for (const o of ordinals) if (m.accepts(index.series.tag(o, m.key) ?? '') !== m.negated) out[n++] = o;
  return out.subarray(0, n);
}

/** Slots of `part` holding one of `ordinals` (both ascending), ascending. */
export function slotsOf(part: IndexedPart, ordinals: Uint32Array): number[] {
  const out: number[] = [];
  const have = part.ordinals;
  if (ordinals.length * 16 < have.length) {
    // Few wanted of many: binary search each.
    for (const o of ordinals) {
      let lo = 0;
      let hi = have.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (have[mid]! < o) lo = mid + 1;
        else hi = mid;
      }
      if (lo < have.length && have[lo] === o) out.push(lo);
    }
    return out;
  }
  for (let i = 0, j = 0; i < have.length && j < ordinals.length; ) {
    if (have[i]! < ordinals[j]!) i++;
    else if (have[i]! > ordinals[j]!) j++;
    else {
      out.push(i);
      i++;
      j++;
    }
  }
  return out;
}

export function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let n = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      out[n++] = a[i]!;
      i++;
      j++;
    }
  }
  return out.subarray(0, n);
}

export function difference(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length);
  let n = 0;
  for (let i = 0, j = 0; i < a.length; ) {
    if (j >= b.length || a[i]! < b[j]!) out[n++] = a[i++]!;
    else if (a[i]! > b[j]!) j++;
    else {
      i++;
      j++;
    }
  }
  return out.subarray(0, n);
}

/** Union of ascending lists, ascending and without repeats. */
export function union(lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 0) return EMPTY;
  if (lists.length === 1) return lists[0]!;
  let total = 0;
  for (const l of lists) total += l.length;
  const out = new Uint32Array(total);
  let pos = 0;
  for (const l of lists) {
    out.set(l, pos);
    pos += l.length;
  }
  out.sort();
  let n = 0;
  for (let i = 0; i < out.length; i++) if (i === 0 || out[i] !== out[n - 1]) out[n++] = out[i]!;
  return out.subarray(0, n);
}
