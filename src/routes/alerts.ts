// POST /api/runtimes/{runtimeId}/alerts (decisions.md "Events"): runtime failure alerts, authenticated by the
// runtime's alert secret — a Trigger.dev HMAC over the raw body, or an n8n error workflow's bearer. This context
// keeps every body as raw bytes, because the signature covers the exact bytes sent.
import type { FastifyInstance } from 'fastify';
import { bearerToken, parseId } from '../http/bearer.ts';
import { ApiError, errors } from '../errors.ts';
import { receiveRuntimeAlert } from '../runs/alerts.ts';
import { documentRoutes } from '../http/openapi-routes.ts';
import { requires } from '../http/openapi-document.ts';
import { AlertReceipt, ref } from '../schemas/responses.ts';

/** Alerts are small; this is far above any real one and far below the JSON ceiling of the other endpoints. */
const ALERT_BODY_LIMIT = 1024 * 1024;

export default async function alertRoutes(app: FastifyInstance): Promise<void> {
  // The runtime's kind picks the scheme: Trigger.dev signs the body, an n8n error workflow sends a bearer.
  documentRoutes(app, {
    tag: 'alerts',
    security: [requires('alertSignature'), requires('alertSecret')],
    errors: ['unauthorized', 'invalid_body', 'payload_too_large', 'upstream_failed'],
    rawBodies: true,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ALERT_BODY_LIMIT }, (_req, body, done) => done(null, body));

  const schema = {
    operationId: 'postRuntimeAlert',
    summary: 'Receive a runtime’s failure alert (Trigger.dev alert channel, n8n error workflow)',
    description: 'The body is the runtime’s own JSON, read as raw bytes (the signature covers them). 502 when n8n cannot say whose execution it is: nothing was applied, resend.',
    response: { 200: ref(AlertReceipt) },
  };
  app.post<{ Params: { runtimeId: string } }>('/runtimes/:runtimeId/alerts', { bodyLimit: ALERT_BODY_LIMIT, schema }, async (req) => {
    const signature = req.headers['x-trigger-signature-hmacsha256'];
    const outcome = await receiveRuntimeAlert(app.ctx, {
      runtimeId: parseId(req.params.runtimeId),
      rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
      signature: typeof signature === 'string' ? signature : null,
      bearer: bearerToken(req),
    });
    switch (outcome.kind) {
      case 'unauthorized':
        throw errors.unauthorized('unknown runtime or invalid alert signature');
      case 'invalid':
        throw new ApiError('invalid_body', outcome.message);
      case 'unverified':
        // Nothing was applied or remembered: a sender that retries (Trigger.dev does) gets it handled then.
        throw new ApiError('upstream_failed', outcome.message);
      case 'applied':
      case 'already_terminal':
        return { received: true, outcome: outcome.kind, runId: outcome.runId };
      default:
        // Duplicates, unknown runs and other alert types are accepted so the sender stops retrying.
        return { received: true, outcome: outcome.kind, runId: null };
    }
  });
}
