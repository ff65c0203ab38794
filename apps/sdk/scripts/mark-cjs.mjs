// dist/cjs holds CommonJS while this package is "type": "module"; a nested package.json tells Node.
import { writeFileSync } from 'node:fs';
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
