// The browser suite's service: the demo's stand-ins and seed (scripts/demo/) behind the real service on a real
// port, on PGlite or — with TEST_DATABASE_URL — on a fresh PostgreSQL database, plus a second organization so the
// role cells have someone to be kept from. Run by global-setup.ts as a child process; it writes what the specs
// need (URL, tokens, ids) to ARS_BROWSER_FIXTURE and serves until SIGTERM.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../../src/config.ts';
import { startService } from '../../../src/service.ts';
import { startStandIns } from '../../../scripts/demo/stand-ins.ts';
import { seed } from '../../../scripts/demo/seed.ts';
import { ServiceClient } from '../../../scripts/demo/service-client.ts';
import type { BrowserFixture } from './fixture.ts';

const fixtureFile = process.env.ARS_BROWSER_FIXTURE;
if (!fixtureFile) throw new Error('ARS_BROWSER_FIXTURE is required');
const port = process.env.ARS_BROWSER_PORT ?? '8199';
const base = `http://127.0.0.1:${port}`;

async function storage(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const masterKey = randomBytes(32).toString('base64');
  const server = process.env.TEST_DATABASE_URL;
  if (!server) {
    const dir = await mkdtemp(path.join(tmpdir(), 'ars-browser-'));
    return { env: { ARS_DATA_DIR: dir, ARS_MASTER_KEY: masterKey }, drop: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `ars_browser_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: server });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString(), ARS_MASTER_KEY: masterKey }, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

const store = await storage();
const adminToken = `browser_admin_${randomBytes(24).toString('hex')}`;
const config = loadConfig({
  PORT: port,
  HOST: '127.0.0.1',
  ARS_PUBLIC_URL: base,
  ARS_ADMIN_TOKEN: adminToken,
  ARS_OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
  ARS_SHUTDOWN_GRACE_MS: '1000',
  LOG_LEVEL: 'warn',
  ...store.env,
  ...(process.env.ARS_CONSOLE_DIR && { ARS_CONSOLE_DIR: process.env.ARS_CONSOLE_DIR }),
});
const standIns = await startStandIns();
const service = await startService(config);
const api = new ServiceClient(base);
const state = await seed(api, adminToken, standIns);

// A plain member of Acme, and Globex with a member and a run of its own that no Acme user may ever see.
const admin = { token: adminToken };
const user = async (email: string, orgId: string, role: 'admin' | 'member') => {
  const u = await api.json('POST', '/api/admin/users', { ...admin, body: { email, name: email.split('@')[0] } });
  await api.json('POST', `/api/admin/orgs/${orgId}/members`, { ...admin, body: { user_id: u.id, role } });
  return { id: u.id as string, email, token: (await api.json('POST', `/api/admin/users/${u.id}/tokens`, { ...admin, body: {} })).token as string };
};
const orgs = (await api.json('GET', '/api/admin/orgs', admin)).data as Array<{ id: string; name: string }>;
const acme = orgs.find((o) => o.name === state.orgName)!;
const globex = await api.json('POST', '/api/admin/orgs', { ...admin, body: { name: 'Globex' } });
const member = await user('grace@acme.example', acme.id, 'member');
const outsider = await user('hal@globex.example', globex.id, 'member');
const secretAgent = await api.json('POST', '/api/admin/agents', { ...admin, body: { org_id: globex.id, name: 'Globex secret agent', managed_by: 'standalone' } });
const hidden = await api.json('POST', `/api/agents/${secretAgent.id}/runs/ingest`, {
  token: secretAgent.ingest_api_key,
  body: { externalRunId: 'globex-only', status: 'completed', startedAt: new Date().toISOString(), completedAt: new Date().toISOString(), output: { secret: true } },
  expect: 200,
});

const fixture: BrowserFixture = {
  baseUrl: base,
  adminToken,
  orgAdmin: { ...state.user, name: 'Ada Lovelace' },
  member,
  outsider,
  agents: state.agents,
  runs: { ...state.runs, hidden: hidden.runId as number },
  orgs: { acme: acme.id, globex: globex.id as string },
};
await writeFile(fixtureFile, JSON.stringify(fixture), { mode: 0o600 });

const stop = async () => {
  await service.stop(Date.now() + 1_000);
  await standIns.stop();
  await store.drop().catch(() => undefined);
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
