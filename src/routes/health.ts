// Probes for whoever runs the service. /livez: the process answers (it never touches the database, so a database
// blip does not get the process restarted). /readyz: it can serve: the database answers within 2 s and every
// migration this code knows is applied; otherwise 503 with Retry-After. /healthz is kept for existing probes.
import type { FastifyInstance } from 'fastify';
import { errors, type ApiError } from '../errors.ts';
import { migrationFiles, pendingMigrations } from '../storage/migrate.ts';
import { within } from '../lib/within.ts';
import { documentRoutes } from '../http/openapi-routes.ts';
import { Health, ref } from '../schemas/responses.ts';

const READY_CHECK_MS = 2_000;

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  const files = await migrationFiles();
  // Probes are public; only /healthz reads the database the way a request does.
  documentRoutes(app, { tag: 'health', security: [], errors: [], usesDatabase: false });
  const ok = { 200: ref(Health) };

  const livez = { operationId: 'livez', summary: 'The process answers (never touches the database)', response: ok };
  app.get('/livez', { schema: livez }, async () => ({ ok: true as const }));

  const readyz = {
    operationId: 'readyz',
    summary: 'The instance can serve: database reachable within 2 s, every migration applied',
    response: ok,
    errors: ['not_ready'] as const,
  };
  app.get('/readyz', { schema: readyz }, async () => {
    const pending = await within(pendingMigrations(app.ctx.db, files), READY_CHECK_MS).catch(() => null);
    if (pending === null) throw notReady('the database did not answer');
    if (pending.length > 0) throw notReady(`migrations not applied: ${pending.join(', ')}`);
    return { ok: true as const };
  });

  const healthz = {
    operationId: 'healthz',
    summary: 'The database is reachable (kept for existing probes)',
    response: ok,
    errors: ['service_unavailable'] as const,
  };
  app.get('/healthz', { schema: healthz }, async () => {
    await app.ctx.db.query('SELECT 1');
    return { ok: true as const };
  });
}

function notReady(why: string): ApiError {
  return errors.unavailable('not_ready', `not ready: ${why}`);
}
