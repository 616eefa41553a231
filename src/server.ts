// The process: configuration, the service (service.ts: storage, listener, background work), the signals and the
// exit. Everything else is in buildApp() so tests never need this file.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, ConfigError } from './config.ts';
import { startService } from './service.ts';
import { StartupError } from './lib/startup-error.ts';

async function main(): Promise<void> {
  let config;
  let service;
  try {
    config = loadConfig();
    service = await startService(config);
  } catch (err) {
    // Expected refusals are one line each, naming the setting, without a stack (decisions.md "Startup that
    // explains itself"); anything else is a bug and keeps its stack.
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    if (err instanceof StartupError) {
      console.error(`cannot start: ${err.message}`);
      process.exit(err.exitCode);
    }
    throw err;
  }
  const log = service.app.log;
  const stale = staleBuild();
  if (stale) log.warn(`this is the build in dist/, older than ${stale}: run \`npm run build\` (or \`npm run dev\` for the sources)`);
  if (service.generatedAdminToken) {
    // Printed once, on the start that generated it (admin-api.md). It is also in the data folder.
    console.log(`\nAdmin token (shown once; also in ${config.dataDir}/admin-token):\n  ${service.generatedAdminToken}\n`);
  }

  let stopping = false;
  // SIGTERM drains (decisions.md "Shutdown"): stop accepting, answer held callers, let held runtime calls answer
  // until the grace period ends, then hand the rest back (their leases lapse: recovery on another instance or
  // the next start finishes them from the runtime's records). The process always ends soon after the deadline.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      log.error({ signal }, 'shutdown overran its deadline; exiting with work still open');
      process.exit(1);
    }, config.shutdownGraceMs + HARD_EXIT_MARGIN_MS).unref();
    log.info({ signal, graceMs: config.shutdownGraceMs, heldCalls: service.app.ctx.heldCalls.size }, 'shutting down');
    const { handedBack } = await service.stop(Date.now() + config.shutdownGraceMs);
    log.info({ handedBack }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * In a checkout, `npm start` runs dist/: a source file changed since the build is said (the image has no src/).
 * Returns the newest such file, or null.
 */
function staleBuild(): string | null {
  const here = import.meta.dirname;
  const src = path.join(here, '..', 'src');
  if (path.basename(here) !== 'dist' || !existsSync(path.join(src, 'server.ts'))) return null;
  const built = statSync(import.meta.filename).mtimeMs;
  const walk = (dir: string): string | null => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      const found = entry.isDirectory() ? walk(p) : statSync(p).mtimeMs > built ? p : null;
      if (found) return path.relative(path.join(here, '..'), found);
    }
    return null;
  };
  return walk(src);
}

/** After the grace period: closing the rest (handing calls back, the pool) takes at most this long. */
const HARD_EXIT_MARGIN_MS = 5_000;

await main();
