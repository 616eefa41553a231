// Issue 37 item 6, "startup that explains itself" (decisions.md of the same name): the service as a real process
// (`npm run dev`'s way: node with tsx as a loader). Every misconfiguration is one line naming its setting, exit
// code 2; a database that cannot be reached is retried with a line per attempt until ARS_DB_STARTUP_TIMEOUT_MS,
// then one line and exit 1; a database that refuses the credentials is one line at once; a port in use is said
// before any key or token is generated. None of them prints a stack trace.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../faults/service-process.ts';
import { hasStackTrace, runService, runToExit } from './processes.ts';

// Each test starts a process through tsx: seconds each, more on a loaded machine.
vi.setConfig({ testTimeout: 90_000 });

const MASTER_KEY = randomBytes(32).toString('base64');
const ADMIN_TOKEN = `startup_admin_${randomBytes(24).toString('hex')}`;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'ars-startup-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The lines a failed start printed (the startup lines only: nothing else runs before them). */
const linesOf = (output: string) => output.split('\n').filter(Boolean);

describe('misconfiguration: one line per setting, exit code 2', () => {
  it('a bad PORT and a bad LOG_LEVEL are one line each, naming the variable', async () => {
    const { code, output } = await runToExit(runService({ ARS_DATA_DIR: dataDir, PORT: 'eighty', LOG_LEVEL: 'loud' }));
    expect(code).toBe(2);
    const lines = linesOf(output);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^invalid configuration: PORT must be a whole number/);
    expect(lines[1]).toMatch(/^invalid configuration: LOG_LEVEL must be one of/);
    expect(hasStackTrace(output)).toBe(false);
  });

  it('DATABASE_URL without ARS_ADMIN_TOKEN names ARS_ADMIN_TOKEN (it was an uncaught Error with a stack)', async () => {
    const { code, output } = await runToExit(runService({ DATABASE_URL: 'postgres://ars@127.0.0.1:1/ars', ARS_MASTER_KEY: MASTER_KEY }));
    expect(code).toBe(2);
    expect(linesOf(output)).toEqual(['invalid configuration: ARS_ADMIN_TOKEN is required with DATABASE_URL (only the embedded default generates one)']);
  });

  it('an invalid master key with DATABASE_URL is one message, not also "required" beside it', async () => {
    const { code, output } = await runToExit(
      runService({ DATABASE_URL: 'postgres://ars@127.0.0.1:1/ars', ARS_MASTER_KEY: 'not-a-key', ARS_ADMIN_TOKEN: ADMIN_TOKEN }),
    );
    expect(code).toBe(2);
    expect(linesOf(output)).toEqual(['invalid configuration: ARS_MASTER_KEY must be 32 bytes, base64-encoded']);
  });
});

describe('a port in use', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('is said naming PORT, exit 2, before a master key or admin token is generated', async () => {
    const fresh = path.join(dataDir, 'port-in-use');
    const { code, output } = await runToExit(runService({ ARS_DATA_DIR: fresh, PORT: String(port) }));
    expect(code).toBe(2);
    expect(linesOf(output)).toEqual([`cannot start: PORT ${port} is already in use on 127.0.0.1: stop the process listening there, or set PORT to a free port`]);
    // Nothing was generated (a token printed "once" and then lost with a failed start would be no token at all).
    const made = await readdir(fresh).catch(() => [] as string[]);
    expect(made).not.toContain('admin-token');
    expect(made).not.toContain('master.key');
  });
});

describe('the database at start', () => {
  const pgEnv = (url: string, extra: Record<string, string> = {}) => ({
    DATABASE_URL: url, ARS_MASTER_KEY: MASTER_KEY, ARS_ADMIN_TOKEN: ADMIN_TOKEN, PORT: '0', ...extra,
  });

  it('unreachable: retried with a line per attempt until ARS_DB_STARTUP_TIMEOUT_MS, then one line, exit 1, no password', async () => {
    const port = await freePort(); // nothing listens there
    const { code, output } = await runToExit(runService(pgEnv(`postgres://ars:sekret-pw@127.0.0.1:${port}/ars`, { ARS_DB_STARTUP_TIMEOUT_MS: '2500' })));
    expect(code).toBe(1);
    const lines = linesOf(output);
    const retries = lines.filter((l) => l.startsWith(`database 127.0.0.1:${port}/ars not reachable yet (`));
    expect(retries.length).toBeGreaterThanOrEqual(2); // 0.5 s, 1 s, then what is left of 2.5 s
    expect(retries[0]).toMatch(/ECONNREFUSED.*attempt 1, retrying in 0\.5 s$/);
    expect(lines.at(-1)).toMatch(new RegExp(`^cannot start: DATABASE_URL \\(127\\.0\\.0\\.1:${port}/ars\\) could not be reached in \\d+ s \\(\\d+ attempts; ARS_DB_STARTUP_TIMEOUT_MS=2500\\): .*ECONNREFUSED`));
    expect(lines).toHaveLength(retries.length + 1);
    expect(output).not.toContain('sekret-pw');
    expect(hasStackTrace(output)).toBe(false);
  });

  // A PostgreSQL that answers every connection with "password authentication failed" (SQLSTATE 28P01), as a
  // server with other credentials does: the wire protocol's ErrorResponse after the startup message.
  let refusing: Server;
  let refusingPort: number;
  const connections: Socket[] = [];
  beforeAll(async () => {
    refusingPort = await freePort();
    refusing = createServer((socket) => {
      connections.push(socket);
      socket.once('data', () => {
        const fields = Buffer.concat([
          Buffer.from('SFATAL\0'), Buffer.from('C28P01\0'), Buffer.from('Mpassword authentication failed for user "ars"\0'), Buffer.from('\0'),
        ]);
        const header = Buffer.alloc(5);
        header.write('E', 0);
        header.writeInt32BE(fields.length + 4, 1);
        socket.end(Buffer.concat([header, fields]));
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => refusing.listen(refusingPort, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => refusing.close(() => resolve())));

  it('refusing the credentials: one line naming DATABASE_URL at once (no retries), exit 2', async () => {
    const { code, output } = await runToExit(runService(pgEnv(`postgres://ars:wrong-pw@127.0.0.1:${refusingPort}/ars`)));
    expect(code).toBe(2);
    expect(linesOf(output)).toEqual([
      `cannot start: DATABASE_URL (127.0.0.1:${refusingPort}/ars) refused the service: 28P01: password authentication failed for user "ars"`,
    ]);
    expect(connections.length).toBeGreaterThanOrEqual(1);
    expect(output).not.toContain('wrong-pw');
  });
});
