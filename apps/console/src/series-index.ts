import { ApiError, getJson, type SeriesKey } from './api.js';
import { Names } from './model.js';
import { SUGGESTIONS } from './typeahead.js';

/**
 * Names for the pickers: metrics, tag keys of a metric, values of a key. Metrics come from
 * GET /v1/series (every series with data in the range, fetched once per range). Keys and values
 * come from GET /v1/labels and /v1/labels/{key}/values, narrowed by the metric and the tags
 * already picked; on a server without them (404) they are read off the same series list. Each
 * list is indexed once (Names) and filtered in the page on every keystroke.
 */
export class SeriesIndex {
  private loaded: { key: string; series: Promise<SeriesKey[]> | null; names: Map<string, Promise<Names>> } | null = null;
  /** null until known; false once the server answered 404 (no labels endpoints). */
  private labels: boolean | null = null;

  constructor(
    private range: () => { from: number; to: number },
    private tags: () => string[] = () => [],
  ) {}

  private current(): { from: number; to: number; names: Map<string, Promise<Names>>; series: () => Promise<SeriesKey[]> } {
    const { from, to } = this.range();
    // A coarse key (hours) so that a moving "last hour" does not refetch on every keystroke.
    const key = `${Math.floor(from / 3_600_000)}-${Math.ceil(to / 3_600_000)}`;
    if (this.loaded?.key !== key) this.loaded = { key, series: null, names: new Map() };
    const loaded = this.loaded;
    const series = (): Promise<SeriesKey[]> => {
      if (loaded.series === null) {
        const got = getJson<{ series: SeriesKey[] }>('/v1/series', { from, to }).then((r) => r.series);
        got.catch(() => this.loaded === loaded && (this.loaded = null));
        loaded.series = got;
      }
      return loaded.series;
    };
    return { from, to, names: loaded.names, series };
  }

  /** The names of one question, built once per range (a failed build is asked again next time). */
  private names(what: string, build: (c: ReturnType<SeriesIndex['current']>) => Promise<Iterable<string>>): Promise<Names> {
    const c = this.current();
    let got = c.names.get(what);
    if (!got) {
      got = build(c).then((list) => new Names(list));
      got.catch(() => c.names.delete(what));
      c.names.set(what, got);
    }
    return got;
  }

  /** Ask the labels endpoint; null when this server has none (then the series list answers). */
  private async fromLabels<T>(path: string, params: Record<string, string | number | string[]>, pick: (body: T) => string[]): Promise<string[] | null> {
    if (this.labels === false) return null;
    try {
      const got = pick(await getJson<T>(path, params));
      this.labels = true;
      return got;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && this.labels !== true) {
        this.labels = false;
        return null;
      }
      throw e;
    }
  }

  async metrics(typed: string): Promise<string[]> {
    return (await this.names('\0metrics', async (c) => (await c.series()).map((s) => s.metric))).suggest(typed, SUGGESTIONS);
  }

  async tagKeys(metric: string, typed: string): Promise<string[]> {
    const tag = this.tags();
    const names = await this.names(`\0keys\0${metric}\0${tag.join('\0')}`, async (c) => {
      const got = await this.fromLabels<{ labels: string[] }>('/v1/labels', { from: c.from, to: c.to, ...(metric ? { metric } : {}), tag }, (b) => b.labels);
      if (got) return got;
      return (await c.series()).filter((s) => !metric || s.metric === metric).flatMap((s) => Object.keys(s.tags));
    });
    return names.suggest(typed, SUGGESTIONS);
  }

  async tagValues(metric: string, key: string, typed: string): Promise<string[]> {
    // Values of a key among the series the other picked tags select (not the key's own).
    const tag = this.tags().filter((t) => !t.startsWith(`${key}:`));
    const names = await this.names(`\0values\0${metric}\0${key}\0${tag.join('\0')}`, async (c) => {
      const got = await this.fromLabels<{ values: string[] }>(`/v1/labels/${encodeURIComponent(key)}/values`, { from: c.from, to: c.to, ...(metric ? { metric } : {}), tag }, (b) => b.values);
      if (got) return got;
      return (await c.series()).filter((s) => (!metric || s.metric === metric) && Object.hasOwn(s.tags, key)).map((s) => s.tags[key]!);
    });
    return names.suggest(typed, SUGGESTIONS);
  }
}
