// Issue 13 item 5: examples/trigger-dev's task body, run by the Trigger.dev fake as Trigger.dev would run the task,
// end to end through the service: the SDK triggers the agent, the task resolves its credential (spec 4.10) and
// reports started, then waiting on a token tagged for its run (spec 4.8; decisions.md "Waitpoints"); /waitpoint
// resumes it (spec 4.9) and the run completes with the reviewer's decision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRunClient, type TaskPayload } from '@agent-run-service/sdk';
import { reviewRefund, PAYMENTS, type Decision, type RefundResult } from '../../examples/trigger-dev/src/review-refund.ts';
import { permissiveLimiter, taskAgent, waitForRun } from '../sync/sync-helpers.ts';
import { seedConnection } from '../runtime-api/support.ts';
import { startWorld, type SdkWorld } from '../sdk/sdk-helpers.ts';

let w: SdkWorld;
beforeAll(async () => {
  w = await startWorld({ limiter: permissiveLimiter });
});
afterAll(async () => w.stop());

describe('examples/trigger-dev: the review-refund task against the Trigger.dev fake', () => {
  it('trigger → credential, started, waiting on a tagged token → /waitpoint → completed with the decision', async () => {
    const refunds: Array<{ secret: string; orderId: string; amount: number }> = [];
    const finished: Array<Promise<RefundResult>> = [];
    const agent = await taskAgent(w.t, w.trig, (run) => {
      // What Trigger.dev does on a trigger: run the task with its payload; the waits are the fake's.
      finished.push(reviewRefund(run.payload as TaskPayload, {
        createToken: async ({ tags }) => w.trig.createWaitpointToken('WAITING', tags),
        forToken: async (id) => (await w.trig.waitForToken(id)) as Decision,
        issueRefund: async (secret, refund) => (refunds.push({ secret, ...refund }), { id: 're_1' }),
      }, { agentKey: agent.agentKey }));
    });
    await seedConnection(w.t, agent.agent.id, PAYMENTS);

    const ars = new AgentRunClient({ baseUrl: w.base, ingestKey: agent.ingestKey, agentId: agent.agent.id });
    const { runId } = await ars.trigger({ orderId: 'A-100', amount: 42, reason: 'damaged' });

    const waiting = await waitForRun(w.t, runId, (r) => r.status === 'waiting');
    expect(waiting.wait_state).toMatchObject({ description: 'Refund 42 on order A-100 (damaged)?' });
    const [token] = [...w.trig.tokens.values()];
    expect(token!.tags).toEqual([`ars_run:${w.t.ctx.deploymentId}:${runId}`]);

    const resume = await fetch(`${w.base}/api/runs/${runId}/waitpoint`, {
      method: 'POST', headers: { ...agent.agentAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ payload: { approved: true, reviewer: 'dana' } }),
    });
    expect(resume.status).toBe(200);

    const result = await finished[0]!;
    expect(result).toEqual({ orderId: 'A-100', amount: 42, approved: true, reviewer: 'dana', refundId: 're_1', outputs: 1 });
    expect(refunds).toEqual([{ secret: 'sk-test', orderId: 'A-100', amount: 42 }]);
    const done = await waitForRun(w.t, runId, (r) => r.status === 'completed');
    expect(done).toMatchObject({ output_data: result, outputs: 1 });
  });
});
