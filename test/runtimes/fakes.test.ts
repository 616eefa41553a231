// The fakes are contracts other tests rely on: check the runtimes.md traps they must reproduce.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TriggerDevFake, signedFailureAlert } from '../fakes/trigger-dev-fake.ts';
import { N8nFake, n8nErrorWorkflowAlert } from '../fakes/n8n-fake.ts';

const trigger = new TriggerDevFake({ secretKey: 'tr_dev_fixed' });
const n8n = new N8nFake({ apiKey: 'n8n_fixed' });
beforeAll(async () => {
  await trigger.start();
  await n8n.start();
});
afterAll(async () => {
  await trigger.stop();
  await n8n.stop();
});

describe('Trigger.dev fake', () => {
  it('signs failure alerts as lowercase hex HMAC-SHA256 of the raw body', () => {
    const alert = signedFailureAlert({ secret: 's3cret', runId: 'run_1', id: 'alert_1' });
    expect(alert.headers['x-trigger-signature-hmacsha256']).toBe(createHmac('sha256', 's3cret').update(alert.body).digest('hex'));
    expect(JSON.parse(alert.body)).toMatchObject({ id: 'alert_1', type: 'alert.run.failed', webhookVersion: 'v1', object: { run: { id: 'run_1', status: 'FAILED' } } });
    expect(JSON.parse(signedFailureAlert({ secret: 's', runId: 'run_1', legacy: true }).body).type).toBeUndefined();
  });

  it('answers 429 as problem+json with x-ratelimit-reset and no Retry-After', async () => {
    trigger.rateLimit(1, 1_900_000_000_000);
    const res = await fetch(`${trigger.url}/api/v3/runs/run_x`, { headers: { authorization: 'Bearer tr_dev_fixed' } });
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-ratelimit-reset')).toBe('1900000000000');
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it('refuses a wrong key with 401', async () => {
    const res = await fetch(`${trigger.url}/api/v3/runs/run_x`, { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
  });
});

describe('n8n fake', () => {
  it('builds the error-workflow alert with the alert secret as bearer', () => {
    const alert = n8nErrorWorkflowAlert({ alertSecret: 'a1', executionId: '55', message: 'boom' });
    expect(alert.headers.authorization).toBe('Bearer a1');
    expect(JSON.parse(alert.body)).toMatchObject({ execution: { id: '55', error: { message: 'boom' }, mode: 'webhook' }, workflow: { id: 'wf1' } });
  });

  it('marks every answer with its own CSP header and 404s unknown webhooks the n8n way', async () => {
    const res = await fetch(`${n8n.url}/webhook/missing`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox/);
    expect(await res.json()).toMatchObject({ code: 404, message: 'The requested webhook "POST missing" is not registered.' });
  });

  it('guards the executions API with X-N8N-API-KEY', async () => {
    const ex = n8n.createExecution({ status: 'success' });
    expect((await fetch(`${n8n.url}/api/v1/executions/${ex.id}`)).status).toBe(401);
    const res = await fetch(`${n8n.url}/api/v1/executions/${ex.id}`, { headers: { 'x-n8n-api-key': 'n8n_fixed' } });
    expect(await res.json()).toMatchObject({ id: ex.id, status: 'success', finished: true }); // ids are strings (n8n-captures)
  });
});
