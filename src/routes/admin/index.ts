// /api/admin (admin-api.md): the platform-admin token, or (issue 14) a user signed in by a personal bearer token
// or the console's session cookie, each held to their role (access.ts; docs/security.md "Roles").
import type { FastifyInstance } from 'fastify';
import { ApiError, errors } from '../../errors.ts';
import { crossOriginRefusal, originOf } from '../../http/same-origin.ts';
import { principalOf, signedInToAdmin, signsInByCookie } from '../../orgs/user-auth.ts';
import type { Principal } from '../../orgs/principal.ts';
import { enforceAccess } from './access.ts';
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
import runStartRoutes from './run-start.ts';
import runEventRoutes from './run-events.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who an /api/admin request speaks for, set by the admin context's auth hook. */
    principal: Principal | null;
  }
}

export default async function adminRoutes(app: FastifyInstance, opts: { prefix?: string }): Promise<void> {
  documentRoutes(app, {
    tag: 'admin',
    security: [requires('adminToken'), requires('userToken'), requires('sessionCookie')],
    errors: ['unauthorized', 'forbidden'],
  });
  const platformOrigin = originOf(app.ctx.config.publicUrl);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (req) => {
    const { authorization, cookie } = req.headers;
    const who = await signedInToAdmin(app.ctx, authorization, cookie);
    if (!who) throw errors.unauthorized('missing or invalid credential: the admin token or a personal token (Bearer), or the console session cookie');
    if (signsInByCookie(authorization, cookie)) {
      const refusal = crossOriginRefusal(req.method, req.headers, platformOrigin);
      if (refusal) throw new ApiError('forbidden', refusal);
    }
    req.principal = await principalOf(app.ctx, who);
  });
  enforceAccess(app, opts.prefix ?? '');
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
  await app.register(runStartRoutes);
  await app.register(runEventRoutes);
}
