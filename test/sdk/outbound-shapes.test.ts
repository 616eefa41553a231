// Issue 38 items 5 and 6: what the service sends — the task payload a runtime gets (spec 2.3) and a webhook action's
// body (spec part 6) — is in the document (components TaskPayload and WebhookEvent, `webhooks`), and the SDK's
// TaskPayload and WebhookEvent are those components, not hand-kept copies. Real sends are checked against the
// committed docs/openapi.json with a JSON Schema 2020-12 validator.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { AgentRunClient, type components, type TaskPayload } from '../../packages/sdk/src/index.ts';
import { verifyWebhookAction, type WebhookAction } from '../../packages/sdk/src/webhooks.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { Receiver, seedWebhookAction } from '../events/outbox-helpers.ts';
import { seedConnection } from '../runtime-api/support.ts';
import { permissiveLimiter, taskAgent, workflowAgent } from '../sync/sync-helpers.ts';
import { startWorld, type SdkWorld } from './sdk-helpers.ts';

const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule.default }).default;
const DOC = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../docs/openapi.json'), 'utf8')) as {
  components: { schemas: Record<string, object> };
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
};

/** A validator for one component of the committed document, its references resolved beside it. */
function component(name: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv as never);
  const validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components: DOC.components });
  return (value: unknown) => (validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
}

let w: SdkWorld;
const receiver = new Receiver();
beforeAll(async () => {
  w = await startWorld({ limiter: permissiveLimiter, config: { outboundAllowHosts: ['127.0.0.1'] } });
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await w.stop();
});

describe('issue 38: the task payload (spec 2.3) is the document\'s TaskPayload', () => {
  it('the document names it as the body of its runStart webhook, and the SDK\'s type is that component', () => {
    expect(DOC.webhooks.runStart!.post.requestBody.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/TaskPayload' });
    expect(DOC.webhooks.webhookAction!.post.requestBody.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
    expectTypeOf<TaskPayload>().toEqualTypeOf<components['schemas']['TaskPayload']>();
    expectTypeOf<WebhookAction['body']>().toEqualTypeOf<components['schemas']['WebhookEvent']>();
  });

  it('what Trigger.dev gets as `payload` matches it, connections and credentials token included', async () => {
    const a = await taskAgent(w.t, w.trig);
    await seedConnection(w.t, a.agent.id, 'stripe');
    await new AgentRunClient({ baseUrl: w.base, ingestKey: a.ingestKey, agentId: a.agent.id }).trigger({ company: 'Initech' });
    const sent = (w.trig.triggers().at(-1)!.body as { payload: Record<string, unknown> }).payload;
    expect(Object.keys(sent).sort()).toEqual(['callbackUrl', 'connectionIds', 'credentialsToken', 'deploymentId', 'input', 'runId', 'serviceUrl']);
    expect(component('TaskPayload')(sent)).toEqual([]);
  });

  it('what n8n gets as the webhook body matches it (no connections: no token either)', async () => {
    const a = await workflowAgent(w.t, w.n8n, { json: { ok: true }, executionIdHeader: true });
    await new AgentRunClient({ baseUrl: w.base, ingestKey: a.ingestKey, agentId: a.agent.id }).triggerAndWait({ n: 1 });
    const sent = w.n8n.webhookCalls(a.path).at(-1)!.body;
    expect(sent).toMatchObject({ input: { n: 1 }, serviceUrl: w.base });
    expect(component('TaskPayload')(sent)).toEqual([]);
  });
});

describe('issue 38: a webhook action\'s delivery (spec part 6) is the document\'s WebhookEvent', () => {
  it('the signed body of a real delivery matches it, and the SDK\'s verifier hands it over as that type', async () => {
    const a = await workflowAgent(w.t, w.n8n, { json: { summary: 'done' }, executionIdHeader: true });
    const { secret } = await seedWebhookAction(w.t, a.agent.id, 'completed', `${receiver.url}/hook`);
    await new AgentRunClient({ baseUrl: w.base, ingestKey: a.ingestKey, agentId: a.agent.id }).triggerAndWait({});
    expect(await deliverDueOnce(w.t.ctx, w.t.ctx.clock.now())).toMatchObject({ delivered: 1 });
    const delivery = receiver.received.at(-1)!;
    const event = verifyWebhookAction(secret, delivery.headers, delivery.rawBody);
    expect(event.body).toMatchObject({ run: { agentId: a.agent.id, status: 'completed' }, output: { summary: 'done' } });
    expect(component('WebhookEvent')(JSON.parse(delivery.rawBody))).toEqual([]);
  });
});
