// /api/admin (admin-api.md): everything here needs the platform-admin bearer token.
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../../http/bearer.ts';
import { constantTimeEqual } from '../../lib/secrets.ts';
import { errors } from '../../errors.ts';
import { installAdminBodyHandling } from './body-guard.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';
import { requires } from '../../http/openapi-document.ts';
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
import listRoutes from './lists.ts';
import runReplayRoutes from './run-replay.ts';
import deliveryRoutes from './deliveries.ts';
import dashboardRoutes from './dashboard.ts';

export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  documentRoutes(app, { tag: 'admin', security: [requires('adminToken')], errors: ['unauthorized'] });
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
  await app.register(listRoutes);
  await app.register(runReplayRoutes);
  await app.register(deliveryRoutes);
  await app.register(dashboardRoutes);
}
