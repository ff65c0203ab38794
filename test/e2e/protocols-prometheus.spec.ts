import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeReadResponse, encodeReadRequest, encodeWriteRequest, encodeWriteRequestV2, snappyCompress, snappyDecompress } from '@s4/format';
import { modeEnv } from '../support/modes.js';
import { Program, requireProgram, until } from '../support/programs.js';
import { freePort, S4Process } from '../support/s4-process.js';

const KEY = 'prom-test-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

interface PromMatrix {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; values?: [number, string][]; value?: [number, string] }[] };
  error?: string;
  errorType?: string;
}

/** Two answers of the same query agree: same series, same timestamps, values equal to 1e-9 relative (sums may add in another order). */
function expectSameAnswer(ours: PromMatrix, theirs: PromMatrix, query: string): void {
  expect(ours.status, query).toBe('success');
  expect(theirs.status, query).toBe('success');
  const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort());
  const a = new Map(ours.data.result.map((r) => [key(r.metric), r.values ?? [r.value!]]));
  const b = new Map(theirs.data.result.map((r) => [key(r.metric), r.values ?? [r.value!]]));
  expect([...a.keys()].sort(), query).toEqual([...b.keys()].sort());
  expect(b.size, `${query} has series`).toBeGreaterThan(0);
  for (const [k, theirValues] of b) {
    const ourValues = a.get(k)!;
    expect(ourValues.map(([t]) => t), `${query} ${k}`).toEqual(theirValues.map(([t]) => t));
    ourValues.forEach(([, v], i) => {
      const want = Number(theirValues[i]![1]);
      const got = Number(v);
      if (Number.isNaN(want)) expect(got, `${query} ${k} @${i}`).toBeNaN();
      else expect(Math.abs(got - want), `${query} ${k} @${i}: ${got} vs ${want}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));
    });
  }
}

async function promQuery(base: string, path: string, params: Record<string, string>, headers: Record<string, string> = {}): Promise<PromMatrix> {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() });
  return (await r.json()) as PromMatrix;
}

describe('Prometheus: remote write into S4, remote read and the query API out of it', () => {
  let s4: S4Process;
  let scraper: Program;
  let scraperUrl: string;
  const dir = mkdtempSync(join(tmpdir(), 's4-prom-'));

  beforeAll(async () => {
    const prometheus = requireProgram('prometheus', 'prometheus');
    s4 = await S4Process.start(await modeEnv('embedded', { S4_API_KEYS: KEY }));
    const port = await freePort();
    scraperUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'scraper.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `scrape_configs: [{ job_name: prometheus, static_configs: [{ targets: ['127.0.0.1:${port}'] }] }]`,
        'remote_write:',
        `  - url: ${s4.url}/api/v1/write`,
        `    authorization: { credentials: ${KEY} }`,
        '    queue_config: { batch_send_deadline: 1s, min_backoff: 100ms, max_backoff: 1s }',
      ].join('\n'),
    );
    scraper = Program.start(prometheus, [`--config.file=${join(dir, 'scraper.yml')}`, `--storage.tsdb.path=${join(dir, 'scraper')}`, `--web.listen-address=127.0.0.1:${port}`]);
    // Twelve seconds of scrapes have reached S4 (remote write sends every second).
    await until('12 s of remote-written samples of up in S4', 90_000, async () => {
      if (scraper.exited()) throw new Error(`prometheus exited:\n${scraper.output()}`);
      const r = await promQuery(s4.url, '/api/v1/query', { query: 'count_over_time(up[1m])' }, auth);
      const n = Number(r.data?.result?.[0]?.value?.[1] ?? 0);
      return n >= 12 ? n : undefined;
    });
  });

  afterAll(async () => {
    await scraper?.stop();
    await s4?.stop();
  });

  /** A window that ended 3 s ago (so both sides hold all of it), at whole seconds. */
  const window = () => {
    const end = Math.floor(Date.now() / 1000) - 3;
    return { start: String(end - 8), end: String(end), step: '1' };
  };

  it('answers query_range as Prometheus itself does: selectors, rate, increase, *_over_time, sum/avg/min/max/count by', async () => {
    const w = window();
    const queries = [
      'up',
      'prometheus_http_requests_total{handler="/metrics"}',
      'go_goroutines{job=~"prom.*", instance!=""}',
      'rate(prometheus_http_requests_total{handler="/metrics"}[5s])',
      'increase(prometheus_tsdb_head_samples_appended_total[4s])',
      'avg_over_time(go_memstats_alloc_bytes[5s])',
      'min_over_time(go_goroutines[3s])',
      'max_over_time(go_goroutines[3s] offset 2s)',
      'sum_over_time(up[5s])',
      'count_over_time(up[5s])',
      'last_over_time(process_resident_memory_bytes[5s])',
      'sum by (job) (rate(prometheus_http_requests_total[5s]))',
      'avg(go_memstats_alloc_bytes)',
      'max without (instance) (go_goroutines)',
      'min(up)',
      'count by (handler) (prometheus_http_requests_total)',
    ];
    for (const query of queries) expectSameAnswer(await promQuery(s4.url, '/api/v1/query_range', { query, ...w }, auth), await promQuery(scraperUrl, '/api/v1/query_range', { query, ...w }), query);
    const instant = { query: 'sum by (job) (rate(prometheus_http_requests_total[5s]))', time: w.end };
    expectSameAnswer(await promQuery(s4.url, '/api/v1/query', instant, auth), await promQuery(scraperUrl, '/api/v1/query', instant), instant.query);
  });

  it('remote read returns exactly the raw samples Prometheus holds', async () => {
    const w = window();
    const start = Number(w.start) * 1000;
    const end = Number(w.end) * 1000;
    const body = snappyCompress(encodeReadRequest({ queries: [{ start, end, matchers: [{ type: 'EQ', name: '__name__', value: 'prometheus_http_requests_total' }, { type: 'RE', name: 'handler', value: '/metrics|/api/v1/query_range' }] }], acceptedResponseTypes: [0] }));
    const r = await fetch(`${s4.url}/api/v1/read`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBe('snappy');
    const [series] = decodeReadResponse(snappyDecompress(new Uint8Array(await r.arrayBuffer())));
    // Prometheus' raw samples in the same closed interval: an instant query of a range selector.
    const raw = await promQuery(scraperUrl, '/api/v1/query', { query: `prometheus_http_requests_total{handler=~"/metrics|/api/v1/query_range"}[${(end - start) / 1000}s]`, time: w.end });
    const theirs = new Map(raw.data.result.map((s) => [JSON.stringify(Object.entries(s.metric).sort()), s.values!.map(([t, v]) => [Math.round(t * 1000), Number(v)])]));
    const ours = new Map(series!.map((s) => [JSON.stringify(s.labels), s.ts.map((t, i) => [t, s.values[i]])]));
    expect(ours.size).toBeGreaterThan(0);
    expect(ours).toEqual(theirs);
  });

  it('a second Prometheus reading only from S4 (remote_read) answers as the one that scraped', async () => {
    const prometheus = requireProgram('prometheus', 'prometheus');
    const port = await freePort();
    writeFileSync(join(dir, 'reader.yml'), ['remote_read:', `  - url: ${s4.url}/api/v1/read`, '    read_recent: true', `    authorization: { credentials: ${KEY} }`].join('\n'));
    const reader = Program.start(prometheus, [`--config.file=${join(dir, 'reader.yml')}`, `--storage.tsdb.path=${join(dir, 'reader')}`, `--web.listen-address=127.0.0.1:${port}`]);
    try {
      const url = `http://127.0.0.1:${port}`;
      await until('the reading Prometheus to be ready', 60_000, async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined));
      const w = window();
      for (const query of ['up', 'rate(prometheus_http_requests_total{handler="/metrics"}[5s])', 'sum(go_goroutines)'])
        expectSameAnswer(await promQuery(url, '/api/v1/query_range', { query, ...w }), await promQuery(scraperUrl, '/api/v1/query_range', { query, ...w }), `via remote read: ${query}`);
    } finally {
      await reader.stop();
    }
  });

  it('lists series, label names and label values as Grafana asks for them', async () => {
    const w = window();
    const series = await promQuery(s4.url, '/api/v1/series', { 'match[]': 'up', start: w.start, end: w.end }, auth);
    expect(series).toMatchObject({ status: 'success', data: [{ __name__: 'up', job: 'prometheus' }] });
    const labels = (await (await fetch(`${s4.url}/api/v1/labels?start=${w.start}&end=${w.end}`, { headers: auth })).json()) as { data: string[] };
    expect(labels.data).toEqual(expect.arrayContaining(['__name__', 'instance', 'job', 'handler']));
    const names = (await (await fetch(`${s4.url}/api/v1/label/__name__/values?start=${w.start}&end=${w.end}`, { headers: auth })).json()) as { data: string[] };
    expect(names.data).toEqual(expect.arrayContaining(['up', 'go_goroutines', 'prometheus_http_requests_total']));
    const jobs = (await (await fetch(`${s4.url}/api/v1/label/job/values?match[]=up`, { headers: auth })).json()) as { data: string[] };
    expect(jobs.data).toEqual(['prometheus']);
    const scalar = await promQuery(s4.url, '/api/v1/query', { query: '1+1', time: '100' }, auth);
    expect(scalar).toEqual({ status: 'success', data: { resultType: 'scalar', result: [100, '2'] } });
  });

  it('answers unsupported PromQL with 422 naming the construct, bad PromQL with 400, in Prometheus\' error shape', async () => {
    const w = window();
    for (const [query, construct] of [
      ['topk(3, up)', 'topk'],
      ['histogram_quantile(0.9, rate(x[5m]))', 'histogram_quantile'],
      ['up + up', 'binary operator +'],
      ['rate(up[5m:1m])', 'subquery'],
      ['up @ 100', '@ modifier'],
    ] as const) {
      const r = await fetch(`${s4.url}/api/v1/query_range?${new URLSearchParams({ query, ...w })}`, { headers: auth });
      expect(r.status, query).toBe(422);
      const body = (await r.json()) as PromMatrix;
      expect(body.status).toBe('error');
      expect(body.error, query).toContain(construct);
    }
    const bad = await fetch(`${s4.url}/api/v1/query?query=${encodeURIComponent('up{')}`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ status: 'error', errorType: 'bad_data', error: expect.stringMatching(/syntax error at column/) });
    const all = await fetch(`${s4.url}/api/v1/query?query=${encodeURIComponent('{job=~".*"}')}`, { headers: auth });
    expect(all.status).toBe(400);
    expect((await fetch(`${s4.url}/api/v1/query?query=up`)).status).toBe(401);
  });

  it('takes remote write 2.0 bodies, and refuses a series without __name__ writing nothing', async () => {
    const ts = Date.now() - 60_000;
    const v2 = snappyCompress(encodeWriteRequestV2([{ labels: [['__name__', 'rw2_metric'], ['k', 'v']], ts: [ts, ts + 1000], values: [1.5, 2.5] }]));
    const ok = await fetch(`${s4.url}/api/v1/write`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '2.0.0' }, body: v2 });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('x-prometheus-remote-write-samples-written')).toBe('2');
    const bad = snappyCompress(encodeWriteRequest([{ labels: [['__name__', 'rw_ok'], ['a', 'b']], ts: [ts], values: [1] }, { labels: [['job', 'x']], ts: [ts], values: [1] }]));
    const refused = await fetch(`${s4.url}/api/v1/write`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body: bad });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('timeseries[1]: has no __name__ label');
    const back = await promQuery(s4.url, '/api/v1/query', { query: '{__name__=~"rw2_metric|rw_ok"}', time: String((ts + 1000) / 1000) }, auth);
    expect(back.data.result).toEqual([{ metric: { __name__: 'rw2_metric', k: 'v' }, value: [(ts + 1000) / 1000, '2.5'] }]);
    const junk = await fetch(`${s4.url}/api/v1/write`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body: Uint8Array.of(0x05, 0x10, 1, 2) });
    expect(junk.status).toBe(400);
    expect(await junk.text()).toContain('snappy');
  });
});
