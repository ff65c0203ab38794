// A kept records data dir ($BENCH_WORK/r4-data) and the S4 server started on it, shared by the
// focused records probes (records-r4.mjs, rowgroups-r1.mjs, mem-reads.mjs, mem-passes.mjs). Knobs: BENCH_WORK (/tmp/s4-r4),
// BENCH_S4_PORT (18480), BENCH_S4_DIST (apps/api/dist/main.js of another checkout),
// BENCH_S4_NODE_ARGS, BENCH_S4_CACHE_BYTES (S4_CACHE_BYTES). The server runs with S4's defaults
// (periodic flush, rollups and compaction on) unless a caller passes settings.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, waitHttp } from './http.mjs';
import { start } from './proc.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const env = process.env;
export const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
export const WORK = env.BENCH_WORK || '/tmp/s4-r4';
export const DATA = join(WORK, 'r4-data');
export const PORT = num('BENCH_S4_PORT', 18480);
export const URL_ = `http://127.0.0.1:${PORT}`;
export const METRIC = 'machine.record';

/**
 * S4 on the kept dir (or `dir`), ready: `env` settings on top of its defaults, `nodeArgs` before
 * BENCH_S4_NODE_ARGS, its output in `log` under BENCH_WORK.
 */
export async function startS4({ env: extra = {}, log = 'r4-s4.log', nodeArgs = [], dir = DATA } = {}) {
  const e = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  const childEnv = { ...e, ...extra, S4_HOST: '127.0.0.1', S4_PORT: String(PORT), S4_LOG_LEVEL: 'warn', S4_DATA_DIR: dir, ...(env.BENCH_S4_CACHE_BYTES ? { S4_CACHE_BYTES: env.BENCH_S4_CACHE_BYTES } : {}) };
  const main = env.BENCH_S4_DIST || join(ROOT, 'apps/api/dist/main.js');
  const args = [...nodeArgs, ...(env.BENCH_S4_NODE_ARGS ?? '').split(' ').filter(Boolean), main];
  const child = start(process.execPath, args, { env: childEnv, log: join(WORK, log) });
  await Promise.race([waitHttp(`${URL_}/readyz`, 120_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 exited during start: ${JSON.stringify(x)}`)))]);
  return child;
}

/**
 * `POST /v1/admin/<what>` twice (the second takes what arrived during the first). A 409 means the
 * pass lost its shard lease to the periodic worker doing the same: asked again after a second.
 */
export async function adminPass(what, log = console.error) {
  for (let done = 0; done < 2; ) {
    const r = await request(`${URL_}/v1/admin/${what}`, { method: 'POST' });
    if (r.status === 409) {
      log(`${what} lost its lease to the periodic one; again`);
      await new Promise((ok) => setTimeout(ok, 1000));
    } else if (r.status >= 300) throw new Error(`${what} → ${r.status}: ${r.body.toString().slice(0, 300)}`);
    else done++;
  }
}

export const readPlan = () => JSON.parse(readFileSync(join(WORK, 'r4-plan.json'), 'utf8'));
