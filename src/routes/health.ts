// Probes for whoever runs the service. /livez: the process answers (it never touches the database, so a database
// blip does not get the process restarted). /readyz: it can serve: the database answers within 2 s and every
// migration this code knows is applied; otherwise 503 with Retry-After. /healthz is kept for existing probes.
import type { FastifyInstance } from 'fastify';
import { errors, type ApiError } from '../errors.ts';
import { migrationFiles, pendingMigrations } from '../storage/migrate.ts';
import { within } from '../lib/within.ts';

const READY_CHECK_MS = 2_000;

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  const files = await migrationFiles();

  app.get('/livez', async () => ({ ok: true }));

  app.get('/readyz', async () => {
    const pending = await within(pendingMigrations(app.ctx.db, files), READY_CHECK_MS).catch(() => null);
    if (pending === null) throw notReady('the database did not answer');
    if (pending.length > 0) throw notReady(`migrations not applied: ${pending.join(', ')}`);
    return { ok: true };
  });

  app.get('/healthz', async () => {
    await app.ctx.db.query('SELECT 1');
    return { ok: true };
  });
}

function notReady(why: string): ApiError {
  return errors.unavailable('not_ready', `not ready: ${why}`);
}
