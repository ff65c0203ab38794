import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerRole } from './wire.js';

/**
 * The file a role's worker thread runs: `roles/<role>/<role>.thread.js` of the compiled app. Node
 * runs the server from apps/api/dist, but Vitest runs it from the TypeScript sources, which a
 * thread cannot load; from there the thread still runs the built file (`npm run build` first).
 */
export function threadEntry(role: WorkerRole): URL {
  const here = fileURLToPath(import.meta.url);
  const root = resolve(dirname(here), '..', '..'); // apps/api/src or apps/api/dist
  const built = here.endsWith('.ts') ? join(dirname(root), 'dist') : root;
  const entry = join(built, 'roles', role, `${role}.thread.js`);
  if (!existsSync(entry))
    throw new Error(`the ${role} worker thread runs ${entry}, which does not exist: run \`npm run build\` (worker threads load the compiled JavaScript from apps/api/dist)`);
  return pathToFileURL(entry);
}
