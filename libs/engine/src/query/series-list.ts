import { canonicalSeries, tagsMatch, type SeriesKey, type Tags } from '@s4/core';
import { mapLimit } from '../concurrency.js';
import type { Readers } from './readers.js';

/** Series (metric + tags) with data in [from, to), from hot data and segment footers. */
export async function listSeries(
  { hot, planner, raw, concurrency }: Readers,
  selector: { metric: string | undefined; tags: Tags; from: number; to: number },
): Promise<SeriesKey[]> {
  const { metric, tags, from, to } = selector;
  const found = new Map<string, SeriesKey>();
  await mapLimit(planner.shards(), concurrency, async (ref) => {
    const generation = await hot.generation(ref);
    for (const k of await hot.seriesIn(ref, metric, from, to)) if (tagsMatch(k.tags, tags)) found.set(canonicalSeries(k), k);
    // A day object is listed once per window: its footer is read once.
    const entries = [...new Map((await planner.entries(ref, from, to, generation, metric)).map((e) => [e.key, e])).values()];
    await mapLimit(entries, 4, async (e) => {
      const footer = await raw.footer(e);
      for (const s of footer.series)
        if ((metric === undefined || s.metric === metric) && tagsMatch(s.tags, tags) && s.maxTs >= from && s.minTs < to)
          found.set(canonicalSeries(s), { metric: s.metric, tags: s.tags });
    });
  });
  // Keyed by canonical form: hot-tier and footer copies of one series may list tags in another order.
  return [...found].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, k]) => k);
}
