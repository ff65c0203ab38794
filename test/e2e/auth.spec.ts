import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

const KEY = 'k-0123456789abcdef';
const READER = 'reader-secret-0123456789';
const WRITER_ELSEWHERE = 'writer-secret-0123456789';
const LIMITED = 'limited-secret-0123456789';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

describe('API keys', () => {
  let s4: S4Process;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 's4-keys-')), 'keys.json');
    writeFileSync(
      file,
      JSON.stringify([
        { id: 'reader', sha256: sha(READER), scopes: ['read'] },
        { id: 'elsewhere', sha256: sha(WRITER_ELSEWHERE), scopes: ['write', 'read'], namespaces: ['another-ns'] },
        { id: 'limited', sha256: sha(LIMITED), scopes: ['read'], ratePerSecond: 1 },
      ]),
    );
    s4 = await S4Process.start(await modeEnv('embedded', { S4_API_KEYS: `other-key-000000000,${KEY}`, S4_API_KEYS_FILE: file }));
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

  it('accepts any configured key; health and readiness are open, metrics and the OpenAPI document need a key unless S4_PUBLIC_METRICS', async () => {
    expect((await fetch(`${s4.url}/v1/series`, { headers: bearer(KEY) })).status).toBe(200);
    for (const p of ['/healthz', '/readyz']) expect((await fetch(`${s4.url}${p}`)).status).toBe(200);
    for (const p of ['/metrics', '/openapi.json']) {
      expect((await fetch(`${s4.url}${p}`)).status, p).toBe(401);
      expect((await fetch(`${s4.url}${p}`, { headers: bearer(READER) })).status, p).toBe(200);
    }
  });

  it('answers 403 naming what a scoped key lacks, and 429 with Retry-After over its rate', async () => {
    const write = (k: string) => fetch(`${s4.url}/v1/write`, { method: 'POST', headers: { ...bearer(k), 'content-type': 'application/json' }, body: JSON.stringify({ samples: [{ metric: 'auth.m', ts: 1, fields: { value: 1 } }] }) });
    expect((await fetch(`${s4.url}/v1/series`, { headers: bearer(READER) })).status).toBe(200);
    const denied = await write(READER);
    expect(denied.status).toBe(403);
    expect(await denied.text()).toMatch(/key reader may read but \/v1\/write needs write/);
    const admin = await fetch(`${s4.url}/v1/admin/flush`, { method: 'POST', headers: bearer(READER) });
    expect(admin.status).toBe(403);
    const elsewhere = await write(WRITER_ELSEWHERE);
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.text()).toContain('namespace');
    expect((await write(KEY)).status).toBe(204);
    expect((await fetch(`${s4.url}/v1/admin/flush`, { method: 'POST', headers: bearer(KEY) })).status).toBe(200);
    const statuses = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${s4.url}/v1/series`, { headers: bearer(LIMITED) });
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get('retry-after');
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('sends security headers and no CORS headers', async () => {
    const r = await fetch(`${s4.url}/v1/series`, { headers: { ...bearer(KEY), origin: 'https://evil.example' } });
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${s4.url}/healthz`)).headers.get('cache-control')).toBe('no-store');
  });

  // docs/protocols.md
  const PROTOCOL_OPS = [
    'GET /ping',
    'POST /write',
    'POST /api/v2/write',
    'POST /api/v1/write',
    'POST /api/v1/read',
    ...['query', 'query_range', 'series', 'labels'].flatMap((p) => [`GET /api/v1/${p}`, `POST /api/v1/${p}`]),
    'GET /api/v1/label/{name}/values',
    'GET /api/v1/metadata',
    'GET /api/v1/status/buildinfo',
    'GET /render',
    'GET /metrics/find',
  ];

  it('documents every endpoint in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${s4.url}/openapi.json`, { headers: bearer(KEY) })).json()) as { paths: Record<string, Record<string, unknown>> };
    const ops = Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m).map((v) => `${v.toUpperCase()} ${p}`));
    expect(ops.sort()).toEqual(
      ['DELETE /v1/series', 'GET /healthz', 'GET /metrics', 'GET /readyz', 'GET /v1/admin/cardinality', 'GET /v1/admin/shards', 'GET /v1/admin/top', 'GET /v1/admin/usage', 'GET /v1/labels', 'GET /v1/labels/{key}/values', 'GET /v1/namespaces', 'GET /v1/latest', 'GET /v1/query', 'GET /v1/series', 'POST /v1/admin/compact', 'POST /v1/admin/flush', 'POST /v1/admin/rebuild-catalog', 'POST /v1/admin/rollup', 'POST /v1/query', 'POST /v1/write', ...PROTOCOL_OPS].sort(),
    );
  });
});
