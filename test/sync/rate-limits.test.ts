// spec 8.1 for the four endpoints of issue 4, with the real limiter (shared store, fixed minute buckets). The
// clock stands still in the middle of a minute so no bucket boundary can fall inside a test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { LIMITS } from '../../src/rate-limits/rate-limiter.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { expectError, runCount, taskAgent, workflowAgent } from './sync-helpers.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp({ clock: new ManualClock(new Date('2031-03-04T05:06:30.000Z')) });
});
afterAll(async () => {
  await n8n.stop();
  await trig.stop();
  await t.close();
});

function expect429(res: LightMyRequestResponse): void {
  expectError(res, 429, 'rate_limited');
  expect(res.headers['retry-after']).toBe('30'); // spec part 7 rule 1: seconds to the next minute boundary
  expect(res.headers['ratelimit-remaining']).toBe('0');
}

describe('spec 8.1 rate limits of the synchronous and webhook endpoints', () => {
  it('spec 8.1: trigger-and-wait allows 5 per minute per agent; the 6th is 429 and starts nothing', async () => {
    const a = await workflowAgent(t, n8n, { json: { ok: 1 } });
    const other = await workflowAgent(t, n8n, { json: { ok: 1 } });
    const call = (x: typeof a) => t.app.inject({ method: 'POST', url: `/api/agents/${x.agent.id}/runs/trigger-and-wait`, headers: x.ingestAuth, payload: {} });
    for (let i = 0; i < LIMITS.triggerAndWait; i++) expect((await call(a)).statusCode).toBe(200);
    expect429(await call(a));
    expect(await runCount(t, a.agent.id)).toBe(5);
    expect((await call(other)).statusCode).toBe(200); // per agent
  });

  it('spec 8.1: trigger-and-download allows 5 per minute per agent', async () => {
    const a = await workflowAgent(t, n8n, { binary: { contentType: 'text/plain', size: 10 } }, { output_kind: 'file_download' });
    const call = () => t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, headers: a.ingestAuth, payload: {} });
    for (let i = 0; i < LIMITS.triggerAndDownload; i++) expect((await call()).statusCode).toBe(200);
    expect429(await call());
    expect(await runCount(t, a.agent.id)).toBe(5);
  });

  it('spec 8.1: webhook allows 60 per minute per agent, counted only after the token matched', async () => {
    const a = await taskAgent(t, trig, undefined, { allow_webhook_triggers: true });
    const bad = () => t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/webhook/wrong`, payload: '{}' });
    for (let i = 0; i < 70; i++) expect((await bad()).statusCode).toBe(401);
    const call = () => t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/webhook/${a.webhookToken}`, payload: '{}' });
    for (let i = 0; i < LIMITS.webhook; i++) expect((await call()).statusCode).toBe(202);
    expect429(await call());
    expect(await runCount(t, a.agent.id)).toBe(60);
  });

  it('spec 8.1: webhook-and-wait allows 10 per minute per agent, in its own bucket', async () => {
    const a = await workflowAgent(t, n8n, { json: { ok: 1 } }, { allow_webhook_triggers: true });
    const call = (kind: string) => t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/${kind}/${a.webhookToken}`, payload: '{}' });
    for (let i = 0; i < LIMITS.webhookAndWait; i++) expect((await call('webhook-and-wait')).statusCode).toBe(200);
    expect429(await call('webhook-and-wait'));
    expect((await call('webhook')).statusCode).toBe(202); // the async endpoint's bucket is separate
    expect(await runCount(t, a.agent.id)).toBe(11);
  });
});
