// One running service: storage, the HTTP listener and background work, started and stopped in one place so that
// `npm start` (server.ts, which adds signals and the process exit) and `npm run demo` take the very same path.
import type { FastifyInstance } from 'fastify';
import type pino from 'pino';
import type { Config } from './config.ts';
import { bootstrapSecrets } from './bootstrap.ts';
import { openDb } from './storage/open-db.ts';
import { migrate } from './storage/migrate.ts';
import { createContext, stopContext } from './context.ts';
import { buildApp } from './app.ts';
import { startBackgroundWork } from './background/index.ts';
import { settledWithin } from './lib/within.ts';

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
}

export async function startService(config: Config, opts: ServiceOptions = {}): Promise<RunningService> {
  const secrets = await bootstrapSecrets(config);
  // A lost pooled or LISTEN connection (they reconnect by themselves) is said in the log, once the logger exists.
  let onDbError = (err: Error): void => console.error(`database connection error: ${err.message}`);
  const db = await openDb(config, (err) => onDbError(err));
  await migrate(db);
  const ctx = await createContext({ config, db, masterKeys: secrets.masterKeys, adminToken: secrets.adminToken, logStream: opts.logStream });
  onDbError = (err) => ctx.log.warn({ code: (err as { code?: unknown }).code, reason: err.message }, 'database connection error; reconnecting');
  const app = await buildApp(ctx);
  if (secrets.generatedMasterKey) app.log.warn(`generated a master key in ${config.dataDir}/master.key: back it up; set ARS_MASTER_KEY(S) in production`);

  const background = startBackgroundWork(app.ctx);
  const stop = async (deadline: number): Promise<{ handedBack: number }> => {
    await settledWithin(app.close(), deadline - Date.now()); // stop accepting; held waits answer 202 (the preClose hook)
    await background.stop(); // stop re-arming sweepers and wait for a running sweep
    await ctx.heldCalls.drain(deadline);
    const handedBack = ctx.heldCalls.size;
    await stopContext(ctx); // what is still held is handed back
    await db.close();
    return { handedBack };
  };
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // A port already taken: close what was opened, so a caller that reports the error leaves nothing behind.
    await stop(Date.now() + 5_000);
    throw err;
  }
  app.log.info({ storage: db.driver, publicUrl: config.publicUrl, sealingKeyId: ctx.secrets.currentKeyId }, 'agent run service ready');
  return { app, generatedAdminToken: secrets.generatedAdminToken, stop };
}
