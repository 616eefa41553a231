// The console's browser suite (issue 14): Playwright driving Debian's Chromium (`apt-get install chromium`;
// Playwright's own browser download does not work here) against the real service on a real port, seeded by
// test/browser/harness. On PostgreSQL when TEST_DATABASE_URL is set, else PGlite. `npm run test:browser`.
import { defineConfig, devices } from '@playwright/test';

const port = process.env.ARS_BROWSER_PORT ?? '8199';

export default defineConfig({
  testDir: 'test/browser',
  testMatch: '**/*.spec.ts',
  globalSetup: './test/browser/global-setup.ts',
  // One service, one seed: specs that change it (rotate, cancel) must not race each other.
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results/browser',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.ARS_CHROMIUM ?? '/usr/bin/chromium',
      // Chromium as root in a container, and none of its calls home: this machine's network is closed.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  projects: [
    { name: 'desktop', use: { ...devices['Desktop Chrome'], channel: undefined }, testIgnore: '**/*.phone.spec.ts' },
    { name: 'phone', use: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }, testMatch: '**/*.phone.spec.ts' },
  ],
});
