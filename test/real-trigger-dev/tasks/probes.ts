// Tasks that show the service what a real Trigger.dev does with each kind of return value, a failure, a long run
// and a wait token (test/real-trigger-dev/*.test.ts).
import { task, wait } from '@trigger.dev/sdk';
import { agentKeys } from './agent-keys.ts';

/** Spec 2.3's task payload, as the service sends it. */
interface Payload {
  runId: number;
  deploymentId?: string;
  callbackUrl?: string;
  input: Record<string, unknown>;
}

export const echo = task({
  id: 'ars-echo',
  run: async (payload: Payload) => ({ echo: payload.input, runId: payload.runId, outputs: 2 }),
});

/** 200 KiB: over the 128 KiB at which the worker offloads its output packet to the object store. */
const BIG = 200 * 1024;

export const bigObject = task({
  id: 'ars-big-object',
  run: async (payload: Payload) => ({ runId: payload.runId, outputs: 5, blob: 'o'.repeat(BIG) }),
});

export const bigString = task({
  id: 'ars-big-string',
  run: async () => 's'.repeat(BIG),
});

export const smallString = task({
  id: 'ars-small-string',
  run: async () => 'done',
});

export const fails = task({
  id: 'ars-fail',
  retry: { maxAttempts: 1 },
  run: async (payload: Payload) => {
    throw new Error(`Deliberate failure: ${String(payload.input.reason ?? 'no reason')}`);
  },
});

export const slow = task({
  id: 'ars-slow',
  run: async (payload: Payload) => {
    const seconds = Number(payload.input.seconds ?? 60);
    for (let i = 0; i < seconds; i++) await new Promise((r) => setTimeout(r, 1000));
    return { sleptSeconds: seconds, runId: payload.runId };
  },
});

/** A human in the loop: a token tagged with the run's tag, reported to the service, resumed through /waitpoint. */
export const waits = task({
  id: 'ars-wait',
  run: async (payload: Payload) => {
    const token = await wait.createToken({ timeout: '10m', tags: [`ars_run:${payload.deploymentId}:${payload.runId}`] });
    const res = await fetch(payload.callbackUrl!, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKeys()['ars-wait']}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'waiting', tokenId: token.id, description: 'Approve?' }),
    });
    if (!res.ok) throw new Error(`the service answered the waiting report ${res.status}: ${await res.text()}`);
    const result = await wait.forToken<{ approved: boolean }>(token.id);
    return result.ok ? { decision: result.output, outputs: 1 } : { timedOut: true };
  },
});
