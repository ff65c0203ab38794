import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build` puts the console (apps/console/dist), from apps/api/{src,dist}/http. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/** The path prefix the console is served under. */
export const CONSOLE_PATH = '/ui';

/**
 * The console's content security policy: its own scripts, styles and API only. No inline script
 * or style element (Vite emits files; uPlot sets styles through the CSSOM, which CSP allows).
 */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: ReadonlyMap<string, string> = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.ico', 'image/x-icon'],
  ['.json', 'application/json'],
  ['.map', 'application/json'],
  ['.txt', 'text/plain; charset=utf-8'],
]);

interface Asset {
  readonly body: Buffer;
  readonly gzip: Buffer | null;
  readonly type: string;
  readonly etag: string;
  /** Vite names files under assets/ by their content hash: they never change under one name. */
  readonly immutable: boolean;
}

/** Every file of the built console, read once at start (a few hundred KB), gzipped when that helps. */
export function loadConsole(dir: string = CONSOLE_DIR): Map<string, Asset> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const rel = relative(dir, path).split(sep).join('/');
      const body = readFileSync(path);
      const type = TYPES.get(extname(name)) ?? 'application/octet-stream';
      const packed = /^(text|application\/json|image\/svg)/.test(type) && body.length > 512 ? gzipSync(body) : null;
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      assets.set(rel, { body, gzip: packed && packed.length < body.length ? packed : null, type, etag, immutable: rel.startsWith('assets/') });
    }
  };
  walk(dir);
  return assets;
}

/**
 * Serve the console at /ui from memory. Its files hold no data (every answer comes from /v1 with
 * the user's key), so they need no key. Without a build, /ui says how to make one.
 */
export function installConsole(fastify: FastifyInstance, assets: Map<string, Asset> | null): void {
  const serve = async (req: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    if (!assets) {
      return reply.status(404).send({ error: { code: 'not_found', message: 'the console is not built: run `npm run build` (it builds apps/console into apps/console/dist)' } });
    }
    const path = req.params['*'] || 'index.html';
    const asset = assets.get(path);
    if (!asset) return reply.status(404).send({ error: { code: 'not_found', message: `no console file ${CONSOLE_PATH}/${path}` } });
    void reply.header('content-type', asset.type).header('etag', asset.etag).header('vary', 'accept-encoding');
    void reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (req.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    if (asset.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(asset.gzip);
    return reply.send(asset.body);
  };
  fastify.get(CONSOLE_PATH, async (_req, reply) => reply.redirect(`${CONSOLE_PATH}/`, 302));
  fastify.get(`${CONSOLE_PATH}/*`, serve);
}
