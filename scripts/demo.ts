// `npm run demo`: one process holding local stand-ins for n8n and Trigger.dev and the service itself (the same
// startService() as `npm start`) on PGlite in .ars-demo/, seeded through its HTTP API, then a printed block with
// what to open, the tokens and the commands to try. Ctrl-C (or SIGTERM) stops everything.
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startService, type RunningService } from '../src/service.ts';
import { StartupError } from '../src/lib/startup-error.ts';
import { freshDemoFolder } from './demo/demo-folder.ts';
import { startStandIns, type StandIns } from './demo/stand-ins.ts';
import { seed } from './demo/seed.ts';
import { ServiceClient } from './demo/service-client.ts';
import { banner, exportLines, type BannerFacts } from './demo/banner.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Offered to open only when they answer: the console and the API reference are built separately. */
const PAGES = [
  { path: '/', what: 'the console (sign in with the user token)' },
  { path: '/docs', what: 'the API reference' },
  { path: '/openapi.json', what: 'the OpenAPI document' },
];
/** Held runtime calls get this long at Ctrl-C; the stand-ins answer at once, so it is rarely used. */
const SHUTDOWN_GRACE_MS = 5_000;

async function main(): Promise<void> {
  const folder = await freshDemoFolder(path.resolve(process.env.ARS_DEMO_DIR || path.join(ROOT, '.ars-demo')));
  const port = process.env.PORT || '8080';
  const log = createWriteStream(folder.logFile, { mode: 0o600 });
  let standIns: StandIns | null = null;
  let service: RunningService | null = null;
  const stopAll = async (): Promise<void> => {
    await service?.stop(Date.now() + SHUTDOWN_GRACE_MS);
    await standIns?.stop();
    await new Promise<void>((resolve) => log.end(resolve));
    await folder.release();
  };
  let stopping = false;
  const shutdown = async (signal: string, code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    if (signal) console.log(`\n${signal}: stopping the service and the stand-ins…`);
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 5_000).unref(); // whatever is still open then
    await stopAll();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT', 0));
  process.on('SIGTERM', () => void shutdown('SIGTERM', 0));

  console.log(`Starting the demo in ${shown(folder.dir)}: stand-ins, then the service (PGlite's first start takes a few seconds)…`);
  try {
    // Only what the demo decides, whatever the shell holds (DATABASE_URL, master keys): it is always a throwaway
    // PGlite on loopback, so the tokens it prints reach nothing else.
    const config = loadConfig({
      PORT: port,
      HOST: '127.0.0.1',
      ARS_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ARS_DATA_DIR: folder.dataDir,
      ARS_SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
      // The demo's zone app and stand-in runtimes listen on loopback: an operator's exception to the SSRF guard.
      ARS_OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    });
    standIns = await startStandIns();
    service = await startService(config, { logStream: log });
    const api = new ServiceClient(config.publicUrl);
    const adminToken = service.app.ctx.adminToken;
    const state = await seed(api, adminToken, standIns);
    const pages = [];
    for (const page of PAGES) if (await api.answers(page.path)) pages.push(page);
    const facts: BannerFacts = {
      base: config.publicUrl, adminToken, state, n8nUrl: standIns.n8n.url, triggerUrl: standIns.trigger.url, zoneAppUrl: standIns.zoneApp.url, pages,
      demoDir: shown(folder.dir), envFile: shown(folder.envFile),
    };
    await writeFile(folder.envFile, `${exportLines(facts).join('\n')}\n`, { mode: 0o600 });
    console.log(banner(facts));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e instanceof ConfigError) console.error(e.message);
    else if (e instanceof StartupError && /^PORT /.test(e.message)) console.error(`port ${port} is taken: start the demo on another one, e.g. PORT=8081 npm run demo`);
    else if (e instanceof StartupError) console.error(`the demo could not start: ${e.message}`);
    else if (e.code === 'EADDRINUSE') console.error(`port ${port} is taken: start the demo on another one, e.g. PORT=8081 npm run demo`);
    else console.error(`the demo could not start: ${e.stack ?? e.message}\n(the service log is ${folder.logFile})`);
    await shutdown('', 1);
  }
}

/** A path as the user reads it: relative to where they stand when it lies below, else absolute. */
function shown(p: string): string {
  const relative = path.relative(process.cwd(), p);
  return relative && !relative.startsWith('..') ? relative : p;
}

// A refusal before anything started (a folder the demo did not make, or one a running demo uses).
await main().catch((err: Error) => {
  console.error(`the demo could not start: ${err.message}`);
  process.exit(1);
});
