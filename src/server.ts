// The process: configuration, storage, the HTTP listener, background work and graceful shutdown.
// Everything else is in buildApp() so tests never need this file.
import { loadConfig, ConfigError } from './config.ts';
import { bootstrapSecrets } from './bootstrap.ts';
import { openDb } from './storage/open-db.ts';
import { migrate } from './storage/migrate.ts';
import { createContext, stopContext } from './context.ts';
import { buildApp } from './app.ts';
import { startBackgroundWork } from './background/index.ts';
import { settledWithin } from './lib/within.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const secrets = await bootstrapSecrets(config);
  // A lost pooled or LISTEN connection (they reconnect by themselves) is said in the log, once the logger exists.
  let onDbError = (err: Error): void => console.error(`database connection error: ${err.message}`);
  const db = await openDb(config, (err) => onDbError(err));
  await migrate(db);
  const ctx = await createContext({ config, db, masterKeys: secrets.masterKeys, adminToken: secrets.adminToken });
  onDbError = (err) => ctx.log.warn({ code: (err as { code?: unknown }).code, reason: err.message }, 'database connection error; reconnecting');
  const app = await buildApp(ctx);
  if (secrets.generatedMasterKey) app.log.warn(`generated a master key in ${config.dataDir}/master.key: back it up; set ARS_MASTER_KEY(S) in production`);

  const background = startBackgroundWork(app.ctx);
  await app.listen({ port: config.port, host: config.host });
  if (secrets.generatedAdminToken) {
    // Printed once, on the start that generated it (admin-api.md). It is also in the data folder.
    console.log(`\nAdmin token (shown once; also in ${config.dataDir}/admin-token):\n  ${secrets.generatedAdminToken}\n`);
  }
  app.log.info({ storage: db.driver, publicUrl: config.publicUrl, sealingKeyId: ctx.secrets.currentKeyId }, 'agent run service ready');

  let stopping = false;
  // SIGTERM drains (decisions.md "Shutdown"): stop accepting, answer held callers, let held runtime calls answer
  // until the grace period ends, then hand the rest back (their leases lapse: recovery on another instance or
  // the next start finishes them from the runtime's records). The process always ends soon after the deadline.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + config.shutdownGraceMs;
    setTimeout(() => {
      app.log.error({ signal }, 'shutdown overran its deadline; exiting with work still open');
      process.exit(1);
    }, config.shutdownGraceMs + HARD_EXIT_MARGIN_MS).unref();
    app.log.info({ signal, graceMs: config.shutdownGraceMs, heldCalls: ctx.heldCalls.size }, 'shutting down');
    await settledWithin(app.close(), deadline - Date.now()); // stop accepting; held waits answer 202 (the preClose hook)
    await background.stop(); // stop re-arming sweepers and wait for a running sweep
    await ctx.heldCalls.drain(deadline);
    const handedBack = ctx.heldCalls.size;
    await stopContext(ctx); // what is still held is handed back
    await db.close();
    app.log.info({ handedBack }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** After the grace period: closing the rest (handing calls back, the pool) takes at most this long. */
const HARD_EXIT_MARGIN_MS = 5_000;


await main();
