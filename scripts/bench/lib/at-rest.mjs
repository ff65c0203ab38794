// What a store holds at rest, counted the way S4 counts it: the objects its catalogs name. Parts
// a fold replaced stay on disk until their delete grace (10 min by default) and are not data.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCatalog } from '../../../libs/format/dist/index.js';

/** Bytes and objects named by the catalogs under `dir` (`…/cat` or `…/rollup/cat`: one folder per shard). */
export function registered(dir) {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  for (const shard of readdirSync(dir, { withFileTypes: true }))
    if (shard.isDirectory())
      for (const f of readdirSync(join(dir, shard.name)))
        if (f.endsWith('.s4cat'))
          for (const e of decodeCatalog(new Uint8Array(readFileSync(join(dir, shard.name, f)))).entries) {
            bytes += e.size;
            files++;
          }
  return { bytes, files };
}
