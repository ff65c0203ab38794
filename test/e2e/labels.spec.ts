import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, post } from '../support/client.js';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;

describe('labels endpoints and tag matchers over HTTP (embedded)', () => {
  let s4: S4Process;
  const now = Date.now();
  const past = Math.floor(now / H) * H - 3 * H;
  const get = async (path: string) => {
    const r = await fetch(`${s4.url}${path}`);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    s4 = await S4Process.start(await modeEnv('embedded'));
    const samples = [];
    for (let i = 0; i < 20; i++) samples.push({ metric: 'cpu', tags: { host: `web-${i}`, dc: i % 2 ? 'us' : 'eu' }, ts: past + i, fields: { value: i } });
    samples.push({ metric: 'mem', tags: { host: 'db-1', role: 'primary' }, ts: past, fields: { value: 1 } });
    await expectOk(await post(`${s4.url}/v1/write`, { samples }));
    await expectOk(await post(`${s4.url}/v1/admin/flush`, {}));
    const compact = (await (await expectOk(await post(`${s4.url}/v1/admin/compact`, {}))).json()) as { index?: { indexes: number } };
    expect(compact.index?.indexes).toBeGreaterThan(0);
    // Still hot: a series only the hot tier has.
    await expectOk(await post(`${s4.url}/v1/write`, { samples: [{ metric: 'cpu', tags: { host: 'web-hot', dc: 'ap', rack: 'r1' }, ts: now, fields: { value: 1 } }] }));
  });
  afterAll(async () => {
    await s4?.stop();
  });

  it('GET /v1/labels lists the tag keys, of every series or of one metric', async () => {
    expect(await get('/v1/labels')).toEqual({ status: 200, body: { labels: ['dc', 'host', 'rack', 'role'] } });
    expect((await get('/v1/labels?metric=cpu')).body).toEqual({ labels: ['dc', 'host', 'rack'] });
    expect((await get(`/v1/labels?metric=cpu&from=${past}&to=${past + H}`)).body).toEqual({ labels: ['dc', 'host'] });
    expect((await get('/v1/labels?metric=nothing')).body).toEqual({ labels: [] });
  });

  it('GET /v1/labels/{key}/values lists the values, filtered by metric, time range and selector', async () => {
    expect((await get('/v1/labels/dc/values')).body).toEqual({ values: ['ap', 'eu', 'us'] });
    expect((await get(`/v1/labels/dc/values?metric=cpu&from=${past}&to=${past + H}`)).body).toEqual({ values: ['eu', 'us'] });
    expect((await get('/v1/labels/host/values?metric=mem')).body).toEqual({ values: ['db-1'] });
    expect((await get('/v1/labels/host/values?metric=cpu&match=host%3D~web-1.*')).body).toEqual({ values: ['web-1', ...Array.from({ length: 10 }, (_, i) => `web-1${i}`)] });
    expect((await get(`/v1/labels/${encodeURIComponent('no such key')}/values`)).body).toEqual({ values: [] });
  });

  it('match= selects series in queries and listings; the legacy tag=k:v still works', async () => {
    const q = async (params: string) => {
      const r = await get(`/v1/query?metric=cpu&from=${past}&to=${now + 1}&${params}`);
      expect(r.status).toBe(200);
      return (r.body['series'] as { tags: Record<string, string> }[]).map((s) => s.tags['host']).sort();
    };
    expect(await q('match=host%3D~web-1%5B0-2%5D')).toEqual(['web-10', 'web-11', 'web-12']);
    expect(await q('match=dc!%3Deu&match=host!~web-1.*')).toEqual(['web-3', 'web-5', 'web-7', 'web-9', 'web-hot']);
    expect(await q('match=rack%3D')).toHaveLength(20);
    expect(await q('tag=dc:ap')).toEqual(['web-hot']);
    expect(await q('tag=dc:us&match=host%3Dweb-3')).toEqual(['web-3']);
    const body = { metric: 'cpu', from: past, to: now + 1, matchers: [{ key: 'host', op: '=~', value: 'web-(1|hot)' }] };
    const r = await expectOk(await post(`${s4.url}/v1/query`, body));
    expect(((await r.json()) as { series: { tags: Record<string, string> }[] }).series.map((s) => s.tags['host']).sort()).toEqual(['web-1', 'web-hot']);
    const series = await get('/v1/series?match=role%3Dprimary');
    expect(series.body).toEqual({ series: [{ metric: 'mem', tags: { host: 'db-1', role: 'primary' } }] });
  });

  it('a bad matcher is a 400 naming it', async () => {
    const bad = await get(`/v1/query?metric=cpu&from=${past}&to=${now}&match=host%3D~web-(`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('not a valid regular expression');
    const noOp = await get('/v1/labels?match=host');
    expect(noOp.status).toBe(400);
    expect(JSON.stringify(noOp.body)).toContain('key=value');
    const body = await fetch(`${s4.url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metric: 'cpu', from: 0, to: 1, matchers: [{ key: 'a', op: '~', value: 'x' }] }) });
    expect(body.status).toBe(400);
    expect(await body.text()).toContain('op must be one of');
  });
});
