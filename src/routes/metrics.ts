// GET /metrics (decisions.md "Metrics"): this instance's Prometheus registry in the text exposition format. With
// ARS_METRICS_TOKEN set it takes that bearer token and nothing else; unset, it is open, which is safe because no
// label carries tenant data (src/metrics/metrics.ts).
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.ts';
import { bearerToken } from '../http/bearer.ts';
import { constantTimeEqual } from '../lib/secrets.ts';
import { documentRoutes } from '../http/openapi-routes.ts';
import { requires } from '../http/openapi-document.ts';
import { rawAnswer } from '../schemas/responses.ts';

export default async function metricsRoutes(app: FastifyInstance): Promise<void> {
  // `{}`: no credential at all while ARS_METRICS_TOKEN is unset. The scrape never fails for the database.
  documentRoutes(app, { tag: 'health', security: [requires('metricsToken'), {}], errors: ['unauthorized'], usesDatabase: false });
  const schema = {
    operationId: 'getMetrics',
    summary: 'This instance’s Prometheus metrics, in the text exposition format',
    response: { 200: rawAnswer('Prometheus text exposition format (version 0.0.4).', 'text/plain', { type: 'string' }) },
  };
  app.get('/metrics', { schema }, async (req, reply) => {
    const required = app.ctx.config.metricsToken;
    if (required !== null) {
      const presented = bearerToken(req);
      if (presented === null || !constantTimeEqual(presented, required)) throw errors.unauthorized();
    }
    const { contentType, body } = await app.ctx.metrics.exposition();
    return reply.type(contentType).send(body);
  });
}
