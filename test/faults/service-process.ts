// The service as a real child process (src/server.ts, as `npm start` runs it), for the fault tests that kill it,
// stop it or restart it: a real port, real signals, its storage surviving it (a PGlite folder, or a database of
// its own on the test PostgreSQL).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers/test-db.ts';

export const ADMIN_TOKEN = `fault_admin_${randomBytes(24).toString('hex')}`;
const ROOT = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Where the service keeps its data across restarts: on PostgreSQL when the suite runs there, else PGlite. */
export interface ServiceStorage {
  env: Record<string, string>;
  describe: string;
  drop(): Promise<void>;
}

export async function serviceStorage(): Promise<ServiceStorage> {
  const masterKey = randomBytes(32).toString('base64');
  if (TEST_DATABASE_URL) {
    const name = `ars_fault_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    const admin = async (sql: string) => {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL! });
      await c.connect();
      try {
        await c.query(sql);
      } finally {
        await c.end();
      }
    };
    await admin(`CREATE DATABASE ${name}`);
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString(), ARS_MASTER_KEY: masterKey },
      describe: 'PostgreSQL',
      drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'ars-fault-'));
  return { env: { ARS_DATA_DIR: dir, ARS_MASTER_KEY: masterKey }, describe: 'PGlite', drop: () => rm(dir, { recursive: true, force: true }) };
}

export class ServiceProcess {
  #child: ChildProcess | null = null;
  #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | null = null;
  readonly logs: string[] = [];
  url = '';

  constructor(private readonly env: Record<string, string>) {}

  /** Starts the service and resolves once /readyz answers 200. */
  async start(): Promise<void> {
    // A caller that must know the port first (to set ARS_PUBLIC_URL) passes PORT.
    const port = this.env.PORT ? Number(this.env.PORT) : await freePort();
    this.url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ARS_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'info', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    const keep = (chunk: Buffer) => this.logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.#exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    // Generous: on a busy two-core machine (a real runtime beside it) PGlite's start-up alone can take a minute.
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`the service exited at start (${child.exitCode}):\n${this.logs.slice(-20).join('\n')}`);
      const ok = await fetch(`${this.url}/readyz`).then((r) => r.ok, () => false);
      if (ok) return;
      await sleep(100);
    }
    throw new Error(`the service did not become ready:\n${this.logs.slice(-20).join('\n')}`);
  }

  /** kill -9: no handler runs, nothing is flushed or handed back. */
  async kill9(): Promise<void> {
    this.#child?.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM; resolves with the exit code and how long the process took to exit. */
  async sigterm(): Promise<{ code: number | null; ms: number }> {
    const t0 = Date.now();
    this.#child?.kill('SIGTERM');
    const { code } = await this.#exited!;
    return { code, ms: Date.now() - t0 };
  }

  async stop(): Promise<void> {
    if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null) await this.kill9();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field in the tests
  async api<T = any>(method: string, urlPath: string, body?: unknown, auth = `Bearer ${ADMIN_TOKEN}`): Promise<{ status: number; json: T }> {
    const res = await fetch(`${this.url}${urlPath}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : null) as T };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `read` until `done` holds or `ms` passed; returns the last value read. */
export async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await sleep(200);
    v = await read();
  }
  return v;
}

export interface CreatedAgent {
  id: number;
  /** Authorization header value. */
  ingest: string;
  agentKey: string;
}

/** The service as a process, with an organization and one runtime (the real-runtime suites' starting point). */
export interface ServiceOnRuntime {
  service: ServiceProcess;
  storage: ServiceStorage;
  env: Record<string, string>;
  orgId: string;
  runtimeId: number;
}

/**
 * Starts the service on its own database with `env`, then creates an organization and `runtime` in it through the
 * admin API. A start that fails leaves no process or database behind (the caller never gets a handle to clean up).
 */
export async function startServiceOnRuntime(env: Record<string, string>, runtime: Record<string, unknown> & { name: string }): Promise<ServiceOnRuntime> {
  const storage = await serviceStorage();
  const all = { ...storage.env, ...env };
  const service = new ServiceProcess(all);
  try {
    await service.start();
  } catch (err) {
    await service.stop();
    await storage.drop();
    throw err;
  }
  const org = await service.api('POST', '/api/admin/orgs', { name: `Real ${runtime.name}` });
  const rt = await service.api('POST', '/api/admin/runtimes', { org_id: org.json.id, ...runtime });
  if (rt.status !== 201) throw new Error(`creating runtime ${runtime.name} answered ${rt.status}: ${JSON.stringify(rt.json)}`);
  return { service, storage, env: all, orgId: org.json.id, runtimeId: rt.json.id };
}

/**
 * A platform agent on `at.runtimeId` whose target is `target`, created through the admin API as an admin would: the
 * one way the real-runtime suites (test/real-n8n, test/real-trigger-dev) make their agents.
 */
export async function createPlatformAgent(
  service: ServiceProcess,
  at: { orgId: string; runtimeId: number },
  name: string,
  target: string,
  fields: Record<string, unknown> = {},
): Promise<CreatedAgent> {
  const agent = await service.api('POST', '/api/admin/agents', {
    org_id: at.orgId, name, managed_by: 'platform', status: 'active', runtime_id: at.runtimeId, target, allow_external_triggers: true, ...fields,
  });
  if (agent.status !== 201) throw new Error(`creating agent ${name} answered ${agent.status}: ${JSON.stringify(agent.json)}`);
  return { id: agent.json.id, ingest: `Bearer ${agent.json.ingest_api_key}`, agentKey: agent.json.agent_api_key };
}
