import type { FastifyInstance } from 'fastify';

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', async () => {
    await app.ctx.db.query('SELECT 1');
    return { ok: true };
  });
}
