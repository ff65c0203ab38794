#!/usr/bin/env node
// Launcher of the `s4` command. Runs the compiled CLI (dist/) when it has been built; otherwise,
// e.g. right after `npm ci` in a fresh clone, runs the TypeScript sources directly with Node's
// built-in type stripping (Node >= 22.18 / 23.6), mapping the `.js` import suffixes of the
// sources to their `.ts` files. Set S4_CLI_FROM_SOURCE=1 to force the sources.
import { existsSync } from 'node:fs';
import module from 'node:module';

const here = new URL('../', import.meta.url);
const built = new URL('dist/main.js', here);
const sdkBuilt = new URL('../sdk/dist/esm/index.js', here);
const fromSource = process.env.S4_CLI_FROM_SOURCE === '1' || !existsSync(built) || (existsSync(new URL('../sdk/package.json', here)) && !existsSync(sdkBuilt));

let entry = built;
if (fromSource) {
  if (typeof module.registerHooks !== 'function') {
    process.stderr.write('s4: not built and this Node cannot run TypeScript; run `npm run build` or use Node >= 22.18\n');
    process.exit(1);
  }
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const withSource = { ...context, conditions: [...(context.conditions ?? []), 's4-source'] };
      try {
        return nextResolve(specifier, withSource);
      } catch (error) {
        const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
        if (error?.code === 'ERR_MODULE_NOT_FOUND' && relative && specifier.endsWith('.js')) {
          return nextResolve(`${specifier.slice(0, -3)}.ts`, withSource);
        }
        throw error;
      }
    },
  });
  entry = new URL('src/main.ts', here);
}

const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
