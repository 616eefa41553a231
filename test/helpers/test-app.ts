// Builds the real app on a test database. `logs` collects every log line so tests can scan them for secrets.
// Every answer is checked against the app's own OpenAPI document (openapi-check.ts); close() fails on a mismatch.
import { randomBytes } from 'node:crypto';
import { singleKeyring } from '../../src/lib/secrets.ts';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContext, stopContext } from '../../src/context.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { RateLimiter } from '../../src/rate-limits/rate-limiter.ts';
import type { RuntimeRegistry } from '../../src/runtimes/runtime-registry.ts';
import type { Db } from '../../src/storage/db.ts';
import { createTestDb, type TestDb } from './test-db.ts';
import { OpenApiChecker } from './openapi-check.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export interface TestApp {
  app: FastifyInstance;
  ctx: FastifyInstance['ctx'];
  db: Db;
  testDb: TestDb;
  logs: string[];
  /** Answers the OpenAPI document does not declare, so far (close() throws when there are any). */
  openapiViolations: string[];
  /** A second app instance on the same database (PostgreSQL only). */
  another(overrides?: Partial<TestAppOptions>): Promise<{ app: FastifyInstance; close(): Promise<void> }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: Clock;
  limiter?: RateLimiter;
  /** Store errors of the default (database) limiter, which fails open. */
  onLimiterError?: (err: unknown) => void;
  runtimes?: RuntimeRegistry;
  config?: Partial<Config>;
  /** A PostgreSQL server to create the test database on, instead of TEST_DATABASE_URL (fault tests). */
  databaseUrl?: string;
}

const masterKey = randomBytes(32);

async function instance(db: Db, opts: TestAppOptions, logs: string[], violations: string[]) {
  // debug: every request line is captured, so tests that scan logs for secrets see what an operator would.
  const config: Config = { ...loadConfig({ LOG_LEVEL: 'debug' }), ...opts.config };
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const ctx = await createContext({
    config,
    db,
    masterKeys: singleKeyring(masterKey),
    adminToken: ADMIN_TOKEN,
    clock: opts.clock,
    limiter: opts.limiter,
    onLimiterError: opts.onLimiterError,
    runtimes: opts.runtimes,
    logStream,
  });
  const app = await buildApp(ctx, { instrument: (a) => new OpenApiChecker(violations).install(a) });
  await app.ready();
  return { app, close: async () => (await app.close(), await stopContext(ctx)) };
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const testDb = await createTestDb(opts.databaseUrl);
  const logs: string[] = [];
  const violations: string[] = [];
  const main = await instance(testDb.db, opts, logs, violations);
  const extras: Array<{ close(): Promise<void> }> = [];
  return {
    app: main.app,
    ctx: main.app.ctx,
    db: testDb.db,
    testDb,
    logs,
    openapiViolations: violations,
    async another(overrides = {}) {
      const db = await testDb.openAnother();
      const other = await instance(db, { ...opts, ...overrides }, logs, violations);
      extras.push(other);
      return other;
    },
    async close() {
      for (const e of extras) await e.close();
      await main.close();
      await testDb.drop();
      if (violations.length > 0) {
        throw new Error(`answers the OpenAPI document does not declare (fix the route's response schema):\n${[...new Set(violations)].join('\n')}`);
      }
    },
  };
}
