// Probes for whoever runs the service. /livez: the process answers (it never touches the database, so a database
// blip does not get the process restarted). /readyz: it can serve: the database answers within 2 s and every
// migration this code knows is applied; otherwise 503 with Retry-After. /healthz is kept for existing probes.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { migrationFiles, pendingMigrations } from '../storage/migrate.ts';

const READY_CHECK_MS = 2_000;

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  const files = await migrationFiles();

  app.get('/livez', async () => ({ ok: true }));

  app.get('/readyz', async () => {
    const pending = await withinReadyCheck(pendingMigrations(app.ctx.db, files));
    if (pending === null) throw notReady('the database did not answer');
    if (pending.length > 0) throw notReady(`migrations not applied: ${pending.join(', ')}`);
    return { ok: true };
  });

  app.get('/healthz', async () => {
    await app.ctx.db.query('SELECT 1');
    return { ok: true };
  });
}

/** The check's answer, or null when it failed or took longer than the probe should wait. */
async function withinReadyCheck<T>(check: Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), READY_CHECK_MS)));
  try {
    return await Promise.race([check.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

function notReady(why: string): ApiError {
  return new ApiError('not_ready', `not ready: ${why}`, { headers: { 'retry-after': '5' } });
}
