import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Workspace packages are imported from their TypeScript source (the `ars-source` export condition), so the
  // suite needs no build first; tsconfig.json's customConditions does the same for the type-check.
  resolve: { conditions: ['ars-source'] },
  ssr: { resolve: { conditions: ['ars-source'] } },
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
