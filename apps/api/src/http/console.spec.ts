import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP, installConsole, loadConsole } from './console.js';
import { installSecurityHeaders } from './security.js';

function built(): string {
  const dir = mkdtempSync(join(tmpdir(), 's4-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/ui/assets/app-1a2b.js"></script>');
  writeFileSync(join(dir, 'assets', 'app-1a2b.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  writeFileSync(join(dir, 'assets', 'style-9f.css'), 'body{}');
  return dir;
}

async function server(dir: string | null) {
  const app = Fastify();
  installSecurityHeaders(app);
  installConsole(app, dir ? loadConsole(dir) : null);
  app.get('/v1/thing', async () => ({ ok: true }));
  await app.ready();
  return app;
}

describe('console files at /ui', () => {
  it('serves index.html revalidated and hashed assets immutable, with their types, gzip and ETags', async () => {
    const app = await server(built());
    const index = await app.inject({ url: '/ui/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toBe(CONSOLE_CSP);

    const js = await app.inject({ url: '/ui/assets/app-1a2b.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(js.rawPayload).toString()).toContain('console.log');
    const plain = await app.inject({ url: '/ui/assets/app-1a2b.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toContain('console.log');
    expect((await app.inject({ url: '/ui/assets/app-1a2b.js', headers: { 'if-none-match': String(js.headers.etag) } })).statusCode).toBe(304);
    expect((await app.inject({ url: '/ui/assets/style-9f.css' })).headers['content-type']).toBe('text/css; charset=utf-8');

    expect((await app.inject({ url: '/ui' })).headers.location).toBe('/ui/');
    // Only files of the build are answered (a map lookup: no path reaches the filesystem).
    const missing = await app.inject({ url: '/ui/assets/nope.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'not_found' } });
    expect((await app.inject({ url: '/ui/%2e%2e/%2e%2e/package.json' })).statusCode).toBe(404);
    // The API's own answers keep the strict policy.
    expect((await app.inject({ url: '/v1/thing' })).headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    await app.close();
  });

  it('says how to build the console when there is none', async () => {
    const app = await server(null);
    const r = await app.inject({ url: '/ui/' });
    expect(r.statusCode).toBe(404);
    expect(r.json<{ error: { message: string } }>().error.message).toContain('npm run build');
    expect(loadConsole(join(tmpdir(), 'no-such-console-dir'))).toBeNull();
    await app.close();
  });
});
