// What the browser harness seeded (serve.ts), as the specs read it (global-setup.ts puts the file's path in env).
import { readFileSync } from 'node:fs';
import type { DemoAgents, DemoState } from '../../../scripts/demo/seed.ts';

export interface SignInUser {
  email: string;
  token: string;
}

export interface BrowserFixture {
  baseUrl: string;
  adminToken: string;
  /** Ada: admin of Acme (the demo's user). */
  orgAdmin: SignInUser & { name: string };
  /** Grace: a plain member of Acme. */
  member: SignInUser & { id: string };
  /** Hal: a member of Globex only. */
  outsider: SignInUser & { id: string };
  agents: DemoAgents;
  runs: DemoState['runs'] & { hidden: number };
  orgs: { acme: string; globex: string };
}

export function fixture(): BrowserFixture {
  const file = process.env.ARS_BROWSER_FIXTURE;
  if (!file) throw new Error('run the browser suite with `npm run test:browser` (global-setup.ts seeds it)');
  return JSON.parse(readFileSync(file, 'utf8')) as BrowserFixture;
}
