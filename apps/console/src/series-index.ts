import { getJson, type SeriesKey } from './api.js';
import { Names } from './model.js';
import { SUGGESTIONS } from './typeahead.js';

/**
 * Names for the pickers: metrics, tag keys of a metric, values of a key. Read from GET /v1/series
 * (every series with data in the range, fetched once per range and filtered here); the
 * /v1/labels endpoints will answer the same questions on the server.
 */
export class SeriesIndex {
  private loaded: { key: string; series: Promise<SeriesKey[]>; names: Map<string, Names> } | null = null;

  constructor(private range: () => { from: number; to: number }) {}

  /** The names of one question (`what`), built once per loaded list. */
  private async names(what: string, collect: (series: SeriesKey[]) => Iterable<string>): Promise<Names> {
    const { from, to } = this.range();
    // A coarse key (hours) so that a moving "last hour" does not refetch on every keystroke.
    const key = `${Math.floor(from / 3_600_000)}-${Math.ceil(to / 3_600_000)}`;
    if (this.loaded?.key !== key) {
      const series = getJson<{ series: SeriesKey[] }>('/v1/series', { from, to }).then((r) => r.series);
      const loaded = { key, series, names: new Map<string, Names>() };
      series.catch(() => this.loaded === loaded && (this.loaded = null));
      this.loaded = loaded;
    }
    const { names, series } = this.loaded;
    let got = names.get(what);
    if (!got) names.set(what, (got = new Names(collect(await series))));
    return got;
  }

  async metrics(typed: string): Promise<string[]> {
    return (await this.names('\0metrics', (all) => all.map((s) => s.metric))).suggest(typed, SUGGESTIONS);
  }

  async tagKeys(metric: string, typed: string): Promise<string[]> {
    const names = await this.names(`\0keys\0${metric}`, function* (all) {
      for (const s of all) if (!metric || s.metric === metric) yield* Object.keys(s.tags);
    });
    return names.suggest(typed, SUGGESTIONS);
  }

  async tagValues(metric: string, key: string, typed: string): Promise<string[]> {
    const names = await this.names(`\0values\0${metric}\0${key}`, function* (all) {
      for (const s of all) if ((!metric || s.metric === metric) && Object.hasOwn(s.tags, key)) yield s.tags[key]!;
    });
    return names.suggest(typed, SUGGESTIONS);
  }
}
