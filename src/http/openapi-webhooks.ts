// The requests the service itself makes (OpenAPI 3.1 `webhooks`), so a runtime's task and a webhook receiver have
// their contract in the same document as the API (issue 38 items 5 and 6): the task payload that starts a run and
// a webhook action's signed delivery. Their bodies are components (schemas/responses.ts).
// openapi-types is what @fastify/swagger's own declarations are written in: present wherever they are.
import type { OpenAPIV3_1 } from 'openapi-types';

type Webhooks = Record<string, OpenAPIV3_1.PathItemObject>;

const json = (schema: string) => ({ required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } });
const header = (name: string, description: string) => ({ name, in: 'header' as const, required: true, description, schema: { type: 'string' as const } });

/** A fresh copy per document: the generator may annotate what it is given. */
export function webhooks(): Webhooks {
  return {
    runStart: {
      post: {
        operationId: 'runStart',
        tags: ['runtime'],
        summary: 'The task payload a runtime gets when a run starts',
        description:
          'n8n: the body of the POST to the agent’s webhook. Trigger.dev: the `payload` of the task trigger. The task reports back with the agent key from its environment (callback, waitpoint, credentials).',
        security: [],
        requestBody: json('TaskPayload'),
        responses: { 200: { description: 'Started: n8n answers the run’s result or an acknowledgement; Trigger.dev its run id.' } },
      },
    },
    webhookAction: {
      post: {
        operationId: 'webhookAction',
        tags: ['admin'],
        summary: 'A webhook action’s delivery for a run event',
        description:
          'Signed per Standard Webhooks: HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the action’s `whsec_` secret (the SDK’s `@agent-run-service/sdk/webhooks` verifies it). At least once: deduplicate on webhook-id.',
        security: [],
        parameters: [
          header('webhook-id', 'The event’s id: the same on every retry of it.'),
          header('webhook-timestamp', 'Unix seconds when this attempt was signed.'),
          header('webhook-signature', 'Space-separated `v1,<base64>` signatures.'),
        ],
        requestBody: json('WebhookEvent'),
        responses: { 200: { description: 'Received (any 2xx). Anything else is retried for 24 hours.' } },
      },
    },
  };
}
