import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

const KEY = 'k-0123456789abcdef';

describe('API keys', () => {
  let s4: S4Process;
  beforeAll(async () => {
    s4 = await S4Process.start(await modeEnv('embedded', { S4_API_KEYS: `other-key-000000000,${KEY}` }));
  });
  afterAll(async () => {
    await s4?.stop();
  });

  it('refuses /v1 without a key or with a wrong one', async () => {
    const none = await fetch(`${s4.url}/v1/series`);
    expect(none.status).toBe(401);
    expect(await none.text()).toContain('Authorization: Bearer');
    const wrong = await fetch(`${s4.url}/v1/series`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
  });

  it('accepts any configured key, and leaves health, readiness and metrics open', async () => {
    expect((await fetch(`${s4.url}/v1/series`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
    for (const p of ['/healthz', '/readyz', '/metrics', '/openapi.json']) expect((await fetch(`${s4.url}${p}`)).status).toBe(200);
  });

  it('documents every endpoint in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${s4.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const ops = Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m).map((v) => `${v.toUpperCase()} ${p}`));
    expect(ops.sort()).toEqual(
      ['GET /healthz', 'GET /metrics', 'GET /readyz', 'GET /v1/latest', 'GET /v1/query', 'GET /v1/series', 'POST /v1/admin/flush', 'POST /v1/admin/rebuild-catalog', 'POST /v1/admin/rollup', 'POST /v1/query', 'POST /v1/write'].sort(),
    );
  });
});
