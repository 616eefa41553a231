// One running service: storage, the HTTP listener and background work, started and stopped in one place so that
// `npm start` (server.ts, which adds signals and the process exit) and `npm run demo` take the very same path.
import type { FastifyInstance } from 'fastify';
import type pino from 'pino';
import { createServer } from 'node:net';
import { checkServiceConfig, type Config } from './config.ts';
import { bootstrapSecrets } from './bootstrap.ts';
import { openDbAtStart } from './storage/open-db.ts';
import { lockDataDir, type DataDirLock } from './storage/data-dir-lock.ts';
import type { Db } from './storage/db.ts';
import { StartupError } from './lib/startup-error.ts';
import { migrate } from './storage/migrate.ts';
import { createContext, stopContext } from './context.ts';
import { buildApp } from './app.ts';
import { startBackgroundWork } from './background/index.ts';
import { settledWithin } from './lib/within.ts';
import { startTraceExport } from './tracing/otlp-export.ts';

export interface RunningService {
  app: FastifyInstance;
  /** Set only on the start that generated the admin token (embedded default): it is to be shown once. */
  generatedAdminToken: string | null;
  /**
   * Drains (decisions.md "Shutdown"): stop accepting, answer held callers, let held runtime calls answer until
   * `deadline` (epoch ms), then hand the rest back. Resolves with how many calls were handed back.
   */
  stop(deadline: number): Promise<{ handedBack: number }>;
}

export interface ServiceOptions {
  /** Where log lines go (stdout by default); the demo keeps them in its folder. */
  logStream?: pino.DestinationStream;
  /** Lines said before the logger exists (a retried database, a stale lock taken over); stderr by default. */
  say?: (line: string) => void;
}

/**
 * Starts the service. The checks that can refuse a start come before anything is generated or opened: the
 * configuration, the port, the data folder's lock (embedded); then the secrets, the database (retried while it
 * cannot be reached), the migrations. An expected refusal is a StartupError or a ConfigError, one line each.
 */
export async function startService(config: Config, opts: ServiceOptions = {}): Promise<RunningService> {
  checkServiceConfig(config);
  const say = opts.say ?? ((line: string) => console.error(line));
  await assertPortFree(config.host, config.port);
  let lock: DataDirLock | null = null;
  const opened: { db: Db | null } = { db: null }; // what a failed start must close
  try {
    if (!config.databaseUrl) lock = await lockDataDir(config.dataDir, say);
    return await startHolding(config, opts, say, lock, (db) => (opened.db = db));
  } catch (err) {
    await opened.db?.close().catch(() => {}); // (already closed when the listen failed: a second close is harmless)
    await lock?.release();
    throw err;
  }
}

async function startHolding(
  config: Config,
  opts: ServiceOptions,
  say: (line: string) => void,
  lock: DataDirLock | null,
  opened: (db: Db) => void,
): Promise<RunningService> {
  const secrets = await bootstrapSecrets(config);
  // A lost pooled or LISTEN connection (they reconnect by themselves) is said in the log, once the logger exists.
  let onDbError = (err: Error): void => console.error(`database connection error: ${err.message}`);
  const db = await openDbAtStart(config, say, (err) => onDbError(err));
  opened(db);
  await migrate(db);
  // Before the context: it traces the database's statements only if spans are recorded.
  const traces = config.tracing ? await startTraceExport(config.tracing) : null;
  const ctx = await createContext({ config, db, masterKeys: secrets.masterKeys, adminToken: secrets.adminToken, logStream: opts.logStream });
  onDbError = (err) => ctx.log.warn({ code: (err as { code?: unknown }).code, reason: err.message }, 'database connection error; reconnecting');
  const app = await buildApp(ctx);
  if (secrets.generatedMasterKey) app.log.warn(`generated a master key in ${config.dataDir}/master.key: back it up; set ARS_MASTER_KEY(S) in production`);

  const background = startBackgroundWork(app.ctx);
  let stopped: Promise<{ handedBack: number }> | null = null;
  const stop = (deadline: number): Promise<{ handedBack: number }> =>
    (stopped ??= (async () => {
      await settledWithin(app.close(), deadline - Date.now()); // stop accepting; held waits answer 202 (the preClose hook)
      await background.stop(); // stop re-arming sweepers and wait for a running sweep
      await ctx.heldCalls.drain(deadline);
      const handedBack = ctx.heldCalls.size;
      await stopContext(ctx); // what is still held is handed back
      await db.close();
      await lock?.release(); // the data folder is free for the next process only once the database is closed
      // The last spans, for a few seconds at most: an unreachable collector must not hold the exit.
      if (traces && !(await settledWithin(traces.shutdown().catch((err: unknown) => ctx.log.warn({ err }, 'traces: the last spans could not be sent')), TRACE_FLUSH_MS))) {
        ctx.log.warn({ ms: TRACE_FLUSH_MS }, 'traces: the last spans were not sent in time; dropped');
      }
      return { handedBack };
    })());
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // Taken since the check at start: close what was opened, so a caller that reports the error leaves nothing behind.
    await stop(Date.now() + 5_000);
    throw listenError(err, config.host, config.port) ?? err;
  }
  const tracesTo = config.tracing ? new URL(config.tracing.endpoint).origin : null; // the origin: a path or query may hold a key
  app.log.info({ storage: db.driver, publicUrl: config.publicUrl, sealingKeyId: ctx.secrets.currentKeyId, tracesTo }, 'agent run service ready');
  return { app, generatedAdminToken: secrets.generatedAdminToken, stop };
}

/** How long the drain waits for the last spans to reach the collector. */
const TRACE_FLUSH_MS = 3_000;

/** Binds host:port for a moment, so that a port in use is said before any key or token is generated. */
async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  }).catch((err: unknown) => {
    throw listenError(err, host, port) ?? err;
  });
}

function listenError(err: unknown, host: string, port: number): StartupError | null {
  switch ((err as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return new StartupError(`PORT ${port} is already in use on ${host}: stop the process listening there, or set PORT to a free port`);
    case 'EACCES':
      return new StartupError(`PORT ${port} on ${host} needs privileges this user does not have: set PORT above 1023`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses, or 0.0.0.0`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`HOST ${host} does not resolve to an address: set HOST to an address, or 0.0.0.0`);
    default:
      return null;
  }
}
