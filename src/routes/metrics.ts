// GET /metrics (decisions.md "Metrics"): this instance's Prometheus registry in the text exposition format. With
// ARS_METRICS_TOKEN set it takes that bearer token and nothing else; unset, it is open, which is safe because no
// label carries tenant data (src/metrics/metrics.ts).
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.ts';
import { bearerToken } from '../http/bearer.ts';
import { constantTimeEqual } from '../lib/secrets.ts';

export default async function metricsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/metrics', async (req, reply) => {
    const required = app.ctx.config.metricsToken;
    if (required !== null) {
      const presented = bearerToken(req);
      if (presented === null || !constantTimeEqual(presented, required)) throw errors.unauthorized();
    }
    const { contentType, body } = await app.ctx.metrics.exposition();
    return reply.type(contentType).send(body);
  });
}
