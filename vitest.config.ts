import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const sdk = (file: string) => fileURLToPath(new URL(`packages/sdk/src/${file}`, import.meta.url));

export default defineConfig({
  // The SDK is imported from its TypeScript source, so the suite needs no build first; tsconfig.json's `paths`
  // does the same for the type-check. Repository-only: the published package knows nothing of src/.
  resolve: {
    alias: [
      { find: /^@agent-run-service\/sdk$/, replacement: sdk('index.ts') },
      { find: /^@agent-run-service\/sdk\/webhooks$/, replacement: sdk('webhooks.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more workers only add PGlite start-up contention.
    maxWorkers: 2,
  },
});
