// /api/admin (admin-api.md): everything here needs the platform-admin bearer token.
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../../http/bearer.ts';
import { constantTimeEqual } from '../../lib/secrets.ts';
import { errors } from '../../errors.ts';

export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (req) => {
    const token = bearerToken(req);
    if (!token || !constantTimeEqual(token, app.ctx.adminToken)) throw errors.unauthorized('missing or invalid admin token');
  });
}
