// The process: configuration, storage, the HTTP listener, background work and graceful shutdown.
// Everything else is in buildApp() so tests never need this file.
import { loadConfig, ConfigError } from './config.ts';
import { bootstrapSecrets } from './bootstrap.ts';
import { openDb } from './storage/open-db.ts';
import { migrate } from './storage/migrate.ts';
import { createContext, stopContext } from './context.ts';
import { buildApp } from './app.ts';
import { startBackgroundWork } from './background/index.ts';

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
  const db = await openDb(config);
  await migrate(db);
  const ctx = await createContext({ config, db, masterKey: secrets.masterKey, adminToken: secrets.adminToken });
  const app = await buildApp(ctx);
  if (secrets.generatedMasterKey) app.log.warn(`generated a master key in ${config.dataDir}/master.key: back it up; set ARS_MASTER_KEY in production`);

  const background = startBackgroundWork(app.ctx);
  await app.listen({ port: config.port, host: config.host });
  if (secrets.generatedAdminToken) {
    // Printed once, on the start that generated it (admin-api.md). It is also in the data folder.
    console.log(`\nAdmin token (shown once; also in ${config.dataDir}/admin-token):\n  ${secrets.generatedAdminToken}\n`);
  }
  app.log.info({ storage: db.driver, publicUrl: config.publicUrl }, 'agent run service ready');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    await app.close(); // stop accepting; held waits finish or answer 202 (the app's preClose hook)
    await background.stop(); // stop re-arming sweepers and wait for a running sweep
    await stopContext(ctx);
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

await main();
