import { getJson, type SeriesKey } from './api.js';
import { suggest } from './model.js';
import { SUGGESTIONS } from './typeahead.js';

/**
 * Names for the pickers: metrics, tag keys of a metric, values of a key. Read from GET /v1/series
 * (every series with data in the range, fetched once per range and filtered here); the
 * /v1/labels endpoints will answer the same questions on the server.
 */
export class SeriesIndex {
  private loaded: { key: string; series: Promise<SeriesKey[]> } | null = null;

  constructor(private range: () => { from: number; to: number }) {}

  private all(): Promise<SeriesKey[]> {
    const { from, to } = this.range();
    // A coarse key (hours) so that a moving "last hour" does not refetch on every keystroke.
    const key = `${Math.floor(from / 3_600_000)}-${Math.ceil(to / 3_600_000)}`;
    if (this.loaded?.key !== key) {
      const series = getJson<{ series: SeriesKey[] }>('/v1/series', { from, to }).then((r) => r.series);
      series.catch(() => (this.loaded = null));
      this.loaded = { key, series };
    }
    return this.loaded.series;
  }

  async metrics(typed: string): Promise<string[]> {
    return suggest(new Set((await this.all()).map((s) => s.metric)), typed, SUGGESTIONS);
  }

  async tagKeys(metric: string, typed: string): Promise<string[]> {
    const keys = new Set<string>();
    for (const s of await this.all()) if (!metric || s.metric === metric) for (const k of Object.keys(s.tags)) keys.add(k);
    return suggest(keys, typed, SUGGESTIONS);
  }

  async tagValues(metric: string, key: string, typed: string): Promise<string[]> {
    const values = new Set<string>();
    for (const s of await this.all()) if ((!metric || s.metric === metric) && Object.hasOwn(s.tags, key)) values.add(s.tags[key]!);
    return suggest(values, typed, SUGGESTIONS);
  }
}
