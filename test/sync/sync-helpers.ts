// Shared by the synchronous endpoint suites (test/sync, test/webhooks-api).
import { vi, expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/test-app.ts';
import { seedAgent, readRun, type AgentOverrides, type SeededAgent } from '../helpers/fixtures.ts';
import type { N8nFake, N8nWorkflow } from '../fakes/n8n-fake.ts';
import type { FakeTriggerRun, TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import type { RateLimiter } from '../../src/rate-limits/rate-limiter.ts';

/** For suites that are not about rate limits (sync endpoints allow 5/min per agent, callbacks 20/min). */
export const permissiveLimiter: RateLimiter = {
  hit: async (_key, limit) => ({ allowed: true, limit, remaining: limit, resetSeconds: 60 }),
};

let seq = 0;

/** A platform agent on the n8n fake whose webhook path runs `workflow`. */
export async function workflowAgent(t: TestApp, n8n: N8nFake, workflow: N8nWorkflow, o: AgentOverrides = {}): Promise<SeededAgent & { path: string }> {
  const path = `wf-${process.pid}-${++seq}`;
  n8n.registerWorkflow(path, workflow);
  const agent = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: path, ...o });
  return { ...agent, path };
}

/** A platform agent on the Trigger.dev fake whose task runs `onTrigger`. */
export async function taskAgent(t: TestApp, trig: TriggerDevFake, onTrigger?: (run: FakeTriggerRun) => void, o: AgentOverrides = {}): Promise<SeededAgent & { task: string }> {
  const task = `task-${process.pid}-${++seq}`;
  trig.registerTask(task, onTrigger);
  const agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: trig.url, apiKey: trig.secretKey }, target: task, ...o });
  return { ...agent, task };
}

/** The platform run id the service put in the task payload (spec 2.3). */
export function platformRunId(body: unknown): number {
  const id = (body as { runId?: unknown } | undefined)?.runId;
  if (typeof id !== 'number') throw new Error('payload has no runId');
  return id;
}

/** spec 4.8 through the real callback endpoint, on whichever instance `app` is. */
export async function callback(app: FastifyInstance, agent: SeededAgent, runId: number, body: Record<string, unknown>): Promise<void> {
  const res = await app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload: body });
  expect(res.statusCode, res.body).toBe(200);
}

export async function waitForRun(t: TestApp, runId: number, ok: (run: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return vi.waitFor(
    async () => {
      const run = await readRun(t, runId);
      if (!run || !ok(run)) throw new Error(`run ${runId} is ${String(run?.status)}`);
      return run;
    },
    { timeout: 10_000, interval: 25 },
  );
}

/** Every refusal: the status asked for, a JSON error body with a request id. */
export function expectError(res: LightMyRequestResponse, status: number, code?: string): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ error: expect.any(String), code: expect.any(String), requestId: res.headers['x-request-id'] });
  if (code) expect(body.code).toBe(code);
  return body;
}

export async function runCount(t: TestApp, agentId: number): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE agent_id = $1', [agentId]);
  return rows[0]!.n;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
