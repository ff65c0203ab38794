// Strict where it catches real bugs (async safety, exhaustive switches), quiet about taste.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const frameworks = ['@aws-sdk/*', '@smithy/*', 'ioredis', 'kafkajs', '@nestjs/*', 'fastify'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'infra/cdk.out/**', '**/*.js', '**/*.mjs', '**/*.cjs', 'vitest.config.ts', '**/vitest.config.ts', 'scripts/**', 'libs/format/bench/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['libs/*/tsconfig.json', 'apps/api/tsconfig.json', 'apps/sdk/tsconfig.test.json', 'apps/cli/tsconfig.test.json', 'test/tsconfig.json', 'infra/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    // The engine has no framework or vendor SDK in it; adapters live in libs/storage, apps wire them.
    files: ['libs/core/**/*.ts', 'libs/format/**/*.ts', 'libs/engine/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: frameworks, message: 'core, format and engine stay framework-free: put I/O behind a port in libs/storage' }] }] },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', '**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
