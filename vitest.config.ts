import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources, so tests never need a build first.
const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const alias = {
  '@s4/core': src('./libs/core/src/index.ts'),
  '@s4/format': src('./libs/format/src/index.ts'),
  '@s4/config': src('./libs/config/src/index.ts'),
  // The adapters' own entries before the package's: an alias also matches the paths under it.
  '@s4/storage/embedded': src('./libs/storage/src/embedded/index.ts'),
  '@s4/storage/redis': src('./libs/storage/src/redis/index.ts'),
  '@s4/storage/s3': src('./libs/storage/src/s3/index.ts'),
  '@s4/storage/kafka': src('./libs/storage/src/kafka/index.ts'),
  '@s4/storage': src('./libs/storage/src/index.ts'),
  '@s4/engine': src('./libs/engine/src/index.ts'),
  '@s4/api': src('./apps/api/src/index.ts'),
  '@s4/sdk': src('./apps/sdk/src/index.ts'),
};

export default defineConfig({
  resolve: { alias },
  test: {
    setupFiles: ['test/setup/fast-check.ts'],
    projects: [
      { resolve: { alias }, test: { setupFiles: ['test/setup/fast-check.ts'], name: 'unit', testTimeout: 60_000, include: ['libs/**/src/**/*.spec.ts', 'apps/**/src/**/*.spec.ts', 'apps/**/test/**/*.spec.ts'] } },
      { resolve: { alias }, test: { setupFiles: ['test/setup/fast-check.ts'], name: 'contract', include: ['test/contract/**/*.spec.ts', 'test/engine/**/*.spec.ts'], testTimeout: 60_000, hookTimeout: 60_000 } },
      { resolve: { alias }, test: { name: 'e2e', include: ['test/e2e/**/*.spec.ts'], testTimeout: 300_000, hookTimeout: 120_000, fileParallelism: false } },
    ],
  },
});
