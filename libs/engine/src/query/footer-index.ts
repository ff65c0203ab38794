import type { Tags } from '@s4/core';
import type { FooterEntry } from '@s4/format';

/** Per cached footer: its entries by metric and by tag pair, so a selector looks only at candidates. */
const footerIndexes = new WeakMap<object, Map<string, FooterEntry[]>>();

/**
 * The footer entries that may match a selector: the shortest of the lists for its metric and
 * for each of its tag pairs. Callers still check every candidate against the whole selector.
 */
export function candidates(footer: { readonly series: readonly FooterEntry[] }, selector: { readonly metric: string; readonly tags: Tags }): readonly FooterEntry[] {
  let index = footerIndexes.get(footer);
  if (!index) {
    index = new Map();
    const put = (k: string, e: FooterEntry) => {
      let l = index!.get(k);
      if (!l) index!.set(k, (l = []));
      l.push(e);
    };
    for (const e of footer.series) {
      put(`m\u0000${e.metric}`, e);
      for (const [k, v] of Object.entries(e.tags)) put(`t\u0000${k}\u0000${v}`, e);
    }
    footerIndexes.set(footer, index);
  }
  let best = index.get(`m\u0000${selector.metric}`) ?? [];
  for (const [k, v] of Object.entries(selector.tags)) {
    const l = index.get(`t\u0000${k}\u0000${v}`) ?? [];
    if (l.length < best.length) best = l;
  }
  return best;
}
