// /api/admin (admin-api.md): everything here needs the platform-admin bearer token.
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../../http/bearer.ts';
import { constantTimeEqual } from '../../lib/secrets.ts';
import { errors } from '../../errors.ts';
import { installAdminBodyHandling } from './body-guard.ts';
import orgRoutes from './orgs.ts';
import userRoutes from './users.ts';
import runtimeAdminRoutes from './runtimes.ts';
import agentAdminRoutes from './agents.ts';
import agentKeyRoutes from './agent-keys.ts';
import connectionRoutes from './connections.ts';
import webhookActionRoutes from './webhook-actions.ts';
import runReadRoutes from './runs-read.ts';
import auditRoutes from './audit.ts';
import runControlRoutes from './run-control.ts';

export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (req) => {
    const token = bearerToken(req);
    if (!token || !constantTimeEqual(token, app.ctx.adminToken)) throw errors.unauthorized('missing or invalid admin token');
  });
  installAdminBodyHandling(app);
  await app.register(orgRoutes);
  await app.register(userRoutes);
  await app.register(runtimeAdminRoutes);
  await app.register(agentAdminRoutes);
  await app.register(agentKeyRoutes);
  await app.register(connectionRoutes);
  await app.register(webhookActionRoutes);
  await app.register(runReadRoutes);
  await app.register(auditRoutes);
  await app.register(runControlRoutes);
}
