import { defineConfig } from 'vitest/config';

// Synthesising a stack takes a few seconds; cdk-nag walks every construct.
export default defineConfig({
  test: {
    name: 'infra',
    include: ['test/**/*.spec.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
