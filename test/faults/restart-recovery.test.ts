// Issue 11 item 6 (items 1 and 2 in action): the service as a real process, killed with kill -9 or stopped with
// SIGTERM while n8n calls are held, then started again. Every run acknowledged before the fault reaches the state
// n8n reached, from n8n's execution records (decisions.md "Recovering lost runs"). The n8n fake runs in this
// process and keeps working while the service is down, as a real n8n would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { eventually, serviceStorage, ServiceProcess, sleep, type ServiceStorage } from './service-process.ts';

const n8n = new N8nFake();
let storage: ServiceStorage;
let service: ServiceProcess;
let ingest: { authorization: string };
let agentId: number;

/** Short leases and sweeps so a lost call is noticed in seconds, not the production 30 s. */
const ENV = { ARS_RUN_LEASE_MS: '2000', ARS_SWEEP_INTERVAL_MS: '300' };
const WORKFLOW_MS = 3_000;

beforeAll(async () => {
  await n8n.start();
  n8n.registerWorkflow('slow-answer', async (w) => {
    await sleep(WORKFLOW_MS);
    return { json: { answer: 42, runId: (w.body as { runId: number }).runId } };
  });
  storage = await serviceStorage();
  service = new ServiceProcess({ ...storage.env, ...ENV });
  await service.start();
  const org = await service.api('POST', '/api/admin/orgs', { name: 'Faults' });
  const runtime = await service.api('POST', '/api/admin/runtimes', { org_id: org.json.id, name: 'n8n', kind: 'workflow', base_url: n8n.url, api_key: n8n.apiKey });
  expect(runtime.status).toBe(201);
  const agent = await service.api('POST', '/api/admin/agents', {
    org_id: org.json.id, name: 'slow', managed_by: 'platform', status: 'active', runtime_id: runtime.json.id, target: 'slow-answer', allow_external_triggers: true,
  });
  expect(agent.status).toBe(201);
  agentId = agent.json.id;
  ingest = { authorization: `Bearer ${agent.json.ingest_api_key}` };
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await n8n.stop();
  await storage?.drop();
});

async function trigger(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await service.api('POST', `/api/agents/${agentId}/runs/trigger`, { input: { i } }, ingest.authorization);
    expect(res.status).toBe(201);
    ids.push(res.json.runId);
  }
  return ids;
}

const run = async (id: number) => (await service.api('GET', `/api/admin/runs/${id}`)).json;

async function allFinished(ids: number[], ms: number) {
  const t0 = Date.now();
  const runs = await eventually(() => Promise.all(ids.map(run)), (rs) => rs.every((r) => r.status === 'completed' || r.status === 'failed'), ms);
  return { runs, ms: Date.now() - t0 };
}

describe('issue 11: runs survive kill -9 and SIGTERM', () => {
  it('kill -9 with held n8n calls: after a restart every run ends as n8n ended it, from its execution record', async () => {
    const ids = await trigger(3);
    await sleep(500);
    expect(n8n.webhookCalls('slow-answer').length).toBeGreaterThanOrEqual(3);
    await service.kill9();
    await sleep(WORKFLOW_MS); // n8n finishes the executions while the service is down
    const restart = Date.now();
    await service.start();
    const { runs } = await allFinished(ids, 60_000);
    console.log(`[faults] kill -9 (${storage.describe}): ${ids.length} runs recovered ${Date.now() - restart} ms after the restart`);
    for (const [i, r] of runs.entries()) {
      expect(r).toMatchObject({ runId: ids[i], status: 'completed' });
      expect(r.external_run_id).toEqual(expect.any(String));
      expect(r.runtime_note).toMatch(/lost its held call/);
      // n8n keeps no Respond body: the output is the last node's, which the fake records as the answer's JSON.
      expect(r.output_data).toEqual({ answer: 42, runId: ids[i] });
    }
  }, 120_000);

  it('SIGTERM drains: held calls that answer within ARS_SHUTDOWN_GRACE_MS are recorded before the process exits', async () => {
    const ids = await trigger(2);
    await sleep(300);
    const { code, ms } = await service.sigterm();
    console.log(`[faults] SIGTERM drain (${storage.describe}): exit ${code} after ${ms} ms with ${ids.length} held calls of ${WORKFLOW_MS} ms`);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(30_000 + 5_000);
    await service.start();
    for (const r of await Promise.all(ids.map(run))) {
      expect(r).toMatchObject({ status: 'completed', output_data: { answer: 42, runId: r.runId }, runtime_note: null });
    }
  }, 120_000);

  it('SIGTERM past the grace period: the process exits by the deadline and the next start recovers the rest', async () => {
    await service.sigterm();
    service = new ServiceProcess({ ...storage.env, ...ENV, ARS_SHUTDOWN_GRACE_MS: '500' });
    await service.start();
    const ids = await trigger(2);
    await sleep(300);
    const { code, ms } = await service.sigterm();
    console.log(`[faults] SIGTERM past grace (${storage.describe}): exit ${code} after ${ms} ms (grace 500 ms)`);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(500 + 5_000);
    await service.start();
    const { runs, ms: took } = await allFinished(ids, 60_000);
    console.log(`[faults] SIGTERM past grace: ${ids.length} runs recovered ${took} ms after the restart`);
    for (const r of runs) expect(r).toMatchObject({ status: 'completed', runtime_note: expect.stringMatching(/lost its held call/) });
  }, 120_000);
});
