// Issue 13 item 2: the SDK's task client (spec 4.8 callback, 4.9 waitpoint, 4.10 credentials) and webhook-action
// receiver (spec part 6) against the real service on a real port: a registered run on a Trigger.dev agent reports
// started, output, waiting (on a token tagged for the run) and completion; another fails; the completed run's
// webhook action, signed by the service, is verified and parsed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRunClient, AgentRunError, TaskClient, type TaskPayload } from '../../packages/sdk/src/index.ts';
import { verifyWebhookAction, WebhookVerificationError } from '../../packages/sdk/src/webhooks.ts';
import { readRun } from '../helpers/fixtures.ts';
import { permissiveLimiter, taskAgent } from '../sync/sync-helpers.ts';
import { seedConnection } from '../runtime-api/support.ts';
import { Receiver, seedWebhookAction } from '../events/outbox-helpers.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { startWorld, type SdkWorld } from './sdk-helpers.ts';

let w: SdkWorld;
const receiver = new Receiver();

beforeAll(async () => {
  // The receiver is on loopback: the SSRF guard lets it through only because it is listed.
  w = await startWorld({ limiter: permissiveLimiter, config: { outboundAllowHosts: ['127.0.0.1'] } });
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await w.stop();
});

/** A run registered with the SDK, and the payload a task would get for it (spec 2.3 + serviceUrl/callbackUrl). */
async function registeredRun(a: Awaited<ReturnType<typeof taskAgent>>, externalRunId: string): Promise<TaskPayload> {
  const reg = await new AgentRunClient({ baseUrl: w.base, ingestKey: a.ingestKey, agentId: a.agent.id }).register(externalRunId);
  return {
    runId: reg.runId, input: {}, connectionIds: reg.connectionIds, credentialsToken: reg.credentialsToken,
    serviceUrl: w.base, callbackUrl: `${w.base}/api/runs/${reg.runId}/callback`, deploymentId: w.t.ctx.deploymentId,
  };
}

describe('TaskClient against a registered run', () => {
  it('credential, started, output, waiting on a tagged token, resume, complete; the webhook action verifies', async () => {
    const a = await taskAgent(w.t, w.trig);
    await seedConnection(w.t, a.agent.id, 'stripe');
    const { secret } = await seedWebhookAction(w.t, a.agent.id, 'completed', `${receiver.url}/hook`);
    const task = TaskClient.fromPayload(await registeredRun(a, 'task-1'), { agentKey: a.agentKey });

    // spec 5: the credentials token lives 60 minutes, so a task resolves first.
    expect(await task.credential('stripe')).toEqual({ type: 'api_key', value: 'sk-test', extras: {} });
    await expect(task.credential('github')).rejects.toThrow(/no active connection to github/);

    await task.started();
    await task.output({ step: 1 }, { outputs: 1 });
    expect(await readRun(w.t, task.runId)).toMatchObject({ status: 'running' });

    expect(task.waitpointTag()).toBe(`ars_run:${w.t.ctx.deploymentId}:${task.runId}`);
    const token = w.trig.createWaitpointToken('WAITING', [task.waitpointTag()]);
    await task.waiting({ tokenId: token.id, description: 'Approve?', url: 'https://review.example/1', output: { draft: 'hi' } });
    expect(await readRun(w.t, task.runId)).toMatchObject({ status: 'waiting' });

    const resume = await fetch(`${w.base}/api/runs/${task.runId}/waitpoint`, {
      method: 'POST', headers: { ...a.agentAuth, 'content-type': 'application/json' }, body: JSON.stringify({ payload: { approved: true } }),
    });
    expect(resume.status).toBe(200);
    expect(await w.trig.waitForToken(token.id)).toEqual({ approved: true });

    await task.complete({ approved: true }, { outputs: 2 });
    expect(await readRun(w.t, task.runId)).toMatchObject({ status: 'completed', outputs: 2 });

    // spec part 6: the service signs and delivers { run, output }; the SDK's receiver verifies the real delivery.
    expect(await deliverDueOnce(w.t.ctx, w.t.ctx.clock.now())).toMatchObject({ delivered: 1 });
    const delivery = receiver.received.at(-1)!;
    const event = verifyWebhookAction(secret, delivery.headers, delivery.rawBody);
    expect(event).toMatchObject({ run: { runId: task.runId, status: 'completed' }, output: { approved: true } });
    expect(event.id).toBe(delivery.headers['webhook-id']);

    // A changed body, another secret, or a stale timestamp are refused.
    expect(() => verifyWebhookAction(secret, delivery.headers, delivery.rawBody.replace('true', 'false'))).toThrow(WebhookVerificationError);
    expect(() => verifyWebhookAction(secret, {}, delivery.rawBody)).toThrow(expect.objectContaining({ reason: 'headers' }));
    expect(() => verifyWebhookAction('whsec_' + Buffer.from('x'.repeat(24)).toString('base64'), delivery.headers, delivery.rawBody)).toThrow(/no matching signature/);
    const later = new Date(Date.now() + 6 * 60_000);
    expect(() => verifyWebhookAction(secret, new Headers(delivery.headers as Record<string, string>), delivery.rawBody, { now: later })).toThrow(/tolerance/);
  });

  it('fail: the run is failed with the error; a callback after that is a typed 409', async () => {
    const a = await taskAgent(w.t, w.trig);
    const task = TaskClient.fromPayload(await registeredRun(a, 'task-2'), { agentKey: a.agentKey });
    await task.fail(new Error('upstream said no'));
    expect(await readRun(w.t, task.runId)).toMatchObject({ status: 'failed' });
    const err = await task.started().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentRunError);
    expect(err).toMatchObject({ status: 409, code: 'backward_transition', runId: task.runId });
  });

  it('a wrong agent key is a typed 401; a payload without serviceUrl needs one pinned', async () => {
    const a = await taskAgent(w.t, w.trig);
    const payload = await registeredRun(a, 'task-3');
    await expect(TaskClient.fromPayload(payload, { agentKey: 'nope' }).started()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    const old = { ...payload, serviceUrl: '', callbackUrl: '' };
    expect(() => TaskClient.fromPayload(old, { agentKey: a.agentKey })).toThrow(/serviceUrl/);
    await TaskClient.fromPayload(old, { agentKey: a.agentKey, serviceUrl: w.base }).started();
    expect(await readRun(w.t, payload.runId)).toMatchObject({ status: 'running' });
  });
});
