import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

// ESLint's own defineConfig: typescript-eslint deprecated its tseslint.config helper in its favour.
export default defineConfig(
  { ignores: ['**/node_modules', 'dist', '.ars-data', '.ars-demo', 'coverage', 'scratch', 'packages/*/dist', 'packages/*/src/generated', 'console/dist', 'console/src/api/schema.ts'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Only src/config.ts reads the environment.' }],
    },
  },
  { files: ['src/config.ts', 'test/**', 'bench/**', 'scripts/**', 'examples/**', 'vitest.config.ts', 'playwright.config.ts', 'console/vite.config.ts'], rules: { 'no-restricted-properties': 'off' } },
  // The console runs in the browser; TypeScript (console/tsconfig.json, lib DOM) checks its globals, not no-undef.
  { files: ['console/src/**'], rules: { 'no-undef': 'off' } },
  // Issue 40 item 6: the console's hooks held to React's rules (call order, effect dependencies, purity).
  { files: ['console/src/**/*.tsx', 'console/src/**/*.ts'], ...reactHooks.configs.flat['recommended-latest'] },
);
