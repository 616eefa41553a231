// zones.md "Zone endpoints": runs, waitpoint and credentials for a zone app acting for a signed-in member.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { permissiveLimiter, workflowAgent } from '../sync/sync-helpers.ts';
import { waitingRun, runState } from '../runs/waitpoint-helpers.ts';
import { credentialsToken, readSecret, seedConnection, zoneToken } from '../credentials/connections.ts';
import { FakeOAuthServer } from '../credentials/fake-oauth-server.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let provider: FakeOAuthServer;
let t: TestApp;
let orgId: string;
let user: string;
let a: SeededAgent; // task runtime (waitpoints)
let b: SeededAgent; // another agent of the same org

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  provider = await new FakeOAuthServer().start();
  trig.registerTask('my-target');
  t = await createTestApp({ limiter: permissiveLimiter, config: { outboundAllowHosts: ['127.0.0.1'] } });
  orgId = await seedOrg(t);
  user = await seedUser(t, { orgId });
  // Zone apps are part of the platform: allow_external_triggers does not apply to them.
  a = await seedAgent(t, { orgId, allow_external_triggers: false, runtime: { kind: 'task', baseUrl: trig.url, apiKey: trig.secretKey }, default_input: { lang: 'en', keep: 1 } });
  b = await seedAgent(t, { orgId, runtime: { kind: 'task', baseUrl: trig.url, apiKey: trig.secretKey } });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([n8n.stop(), trig.stop(), provider?.stop()]);
});

async function zone(agent: SeededAgent, method: 'GET' | 'POST', path: string, payload?: object) {
  const token = await zoneToken(t, agent.agent, user);
  return t.app.inject({
    method,
    url: `/api/zones/agents/${agent.agent.id}${path}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
}

describe('zones.md GET /runs/{runId}', () => {
  it("zones.md: 200 with 4.2's run fields for a run of the agent", async () => {
    const now = t.ctx.clock.now();
    const run = await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'trigger', now, startedAt: now });
    await transition(t.db, run.id, 'terminal', 'completed', now, { outputData: { answer: 42 }, outputs: 3 }, { via: 'admin' });
    const res = await zone(a, 'GET', `/runs/${run.id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['agentId', 'completed_at', 'created_at', 'duration_ms', 'error', 'output_data', 'outputs', 'runId', 'started_at', 'status']);
    expect(body).toMatchObject({ runId: run.id, agentId: a.agent.id, status: 'completed', output_data: { answer: 42 }, outputs: 3, error: null });
  });

  it('zones.md: a waiting run also shows waiting {description, url, output}', async () => {
    const runId = await waitingRun(t, a.agent.id, { tokenId: 'waitpoint_x', description: 'Approve?', url: 'https://review.example/1', output: { draft: 'hi' } });
    const res = await zone(a, 'GET', `/runs/${runId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'waiting', waiting: { description: 'Approve?', url: 'https://review.example/1', output: { draft: 'hi' } } });
    expect(JSON.stringify(res.json())).not.toContain('waitpoint_x'); // the token id stays on the server
  });

  it('zones.md: 404 for a run of another agent, an unknown run, a non-numeric id', async () => {
    const now = t.ctx.clock.now();
    const other = await insertRun(t.db, { agentId: b.agent.id, status: 'queued', source: 'trigger', now });
    for (const id of [String(other.id), '987654321', 'abc']) {
      const res = await zone(a, 'GET', `/runs/${id}`);
      expect(res.statusCode, id).toBe(404);
    }
  });
});

describe('zones.md POST /runs/{runId}/waitpoint', () => {
  it("spec 4.9 via zones.md: 200 {ok:true}, the run resumes, the payload reaches the runtime, audited with the token's user", async () => {
    const token = trig.createWaitpointToken();
    const runId = await waitingRun(t, a.agent.id, { tokenId: token.id });
    const res = await zone(a, 'POST', `/runs/${runId}/waitpoint`, { payload: { approved: true } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect((await runState(t, runId)).status).toBe('running');
    expect(trig.token(token.id).data).toEqual({ approved: true });
    const { rows } = await t.db.query("SELECT actor_user_id, agent_id, details FROM audit_log WHERE action = 'run.waitpoint_completed' AND run_id = $1", [runId]);
    expect(rows).toEqual([{ actor_user_id: user, agent_id: a.agent.id, details: { via: 'zone' } }]);
  });

  it('spec 4.9 via zones.md: an empty body completes with no payload', async () => {
    const token = trig.createWaitpointToken();
    const runId = await waitingRun(t, a.agent.id, { tokenId: token.id });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/zones/agents/${a.agent.id}/runs/${runId}/waitpoint`,
      headers: { authorization: `Bearer ${await zoneToken(t, a.agent, user)}`, 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('zones.md: 404 for a run of another agent; 409 for a run that is not waiting', async () => {
    const token = trig.createWaitpointToken();
    const foreign = await waitingRun(t, b.agent.id, { tokenId: token.id });
    expect((await zone(a, 'POST', `/runs/${foreign}/waitpoint`, {})).statusCode).toBe(404);
    expect((await runState(t, foreign)).status).toBe('waiting');
    const now = t.ctx.clock.now();
    const running = await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'trigger', now, startedAt: now });
    const res = await zone(a, 'POST', `/runs/${running.id}/waitpoint`, {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'waitpoint_unavailable', runId: running.id });
  });

  it('zones.md: a payload that is not an object is 400, naming the field', async () => {
    const res = await zone(a, 'POST', '/runs/1/waitpoint', { payload: 'yes' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('payload');
  });
});

describe('zones.md GET /credentials/{key}', () => {
  it("zones.md: the 4.10 union for the agent's active connection of that integration, audited with the user", async () => {
    const id = await seedConnection(t, a.agent.id, { integrationId: 'github', type: 'api_key', secret: { value: 'gh-key' }, extras: { org: 'acme' } });
    const res = await zone(a, 'GET', '/credentials/github');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 'api_key', value: 'gh-key', extras: { org: 'acme' } });
    expect(res.headers['cache-control']).toBe('no-store');
    const { rows } = await t.db.query(
      "SELECT actor_user_id, agent_id, run_id, details FROM audit_log WHERE action = 'credentials.resolved' AND details->>'connection_id' = $1",
      [id],
    );
    expect(rows).toEqual([{ actor_user_id: user, agent_id: a.agent.id, run_id: null, details: { connection_id: id, integration_id: 'github', via: 'zone' } }]);
  });

  it("zones.md: 404 when the agent has no active connection for the key (none, inactive, or only another agent's)", async () => {
    await seedConnection(t, a.agent.id, { integrationId: 'slack', type: 'api_key', secret: { value: 'x' }, active: false });
    await seedConnection(t, b.agent.id, { integrationId: 'jira', type: 'api_key', secret: { value: 'b-only' } });
    for (const key of ['nothing', 'slack', 'jira']) {
      const res = await zone(a, 'GET', `/credentials/${key}`);
      expect(res.statusCode, key).toBe(404);
      expect(res.body).not.toContain('b-only');
    }
  });

  it('zones.md: shares the 4.10 core — an expired OAuth token is refreshed once for zone and task resolves together', async () => {
    const id = await seedConnection(t, a.agent.id, {
      integrationId: 'google',
      type: 'oauth',
      secret: { access_token: 'old', refresh_token: 'rt-0', token_url: provider.tokenUrl, client_id: 'c', client_secret: 's' },
      expiresAt: new Date(Date.now() - 60_000),
    });
    const release = provider.hold();
    const credTok = await credentialsToken(t, a.agent, 3);
    const pending = [
      ...Array.from({ length: 5 }, () => zone(a, 'GET', '/credentials/google')),
      ...Array.from({ length: 5 }, () =>
        t.app.inject({ method: 'GET', url: `/api/credentials/${id}/resolve`, headers: { ...a.agentAuth, 'x-credentials-token': credTok } }),
      ),
    ];
    while (provider.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 300));
    release();
    const results = await Promise.all(pending);
    expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    expect(provider.calls).toHaveLength(1);
    expect(new Set(results.map((r) => r.json().access_token))).toEqual(new Set(['fresh-access-1']));
    expect((await readSecret(t, id)).secret).toMatchObject({ access_token: 'fresh-access-1', refresh_token: 'rotated-refresh-1' });
  });

  it('zones.md: a refused refresh is 502 here too, without provider text', async () => {
    provider.behaviour = { kind: 'invalid_grant' };
    try {
      await seedConnection(t, a.agent.id, {
        integrationId: 'dropbox',
        type: 'oauth',
        secret: { access_token: 'old', refresh_token: 'rt-dropbox', token_url: provider.tokenUrl, client_id: 'c' },
        expiresAt: new Date(Date.now() - 60_000),
      });
      const res = await zone(a, 'GET', '/credentials/dropbox');
      expect(res.statusCode).toBe(502);
      expect(res.json().code).toBe('upstream_failed');
      for (const s of ['rt-dropbox', provider.refusalMarker, 'old']) expect(res.body).not.toContain(s);
    } finally {
      provider.behaviour = { kind: 'ok', rotate: true, expiresIn: 3600 };
    }
  });
});

describe('zones.md POST /runs (as 4.1)', () => {
  it("zones.md: 201 {runId, status:'queued'}; created_by is the token's user; input merged over the default; external triggers off does not matter", async () => {
    const res = await zone(a, 'POST', '/runs', { input: { lang: 'de' }, userId: '00000000-0000-4000-8000-000000000000' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({ runId: expect.any(Number), status: 'queued' });
    const run = await readRun(t, body.runId);
    expect(run).toMatchObject({ agent_id: a.agent.id, created_by: user, source: 'zone', input: { lang: 'de', keep: 1 } });
    const call = trig.triggers().at(-1)!;
    expect(JSON.stringify(call.body)).toContain('"lang":"de"');
  });

  it('zones.md: no body at all starts a run with the default input', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/api/zones/agents/${a.agent.id}/runs`, headers: { authorization: `Bearer ${await zoneToken(t, a.agent, user)}` } });
    expect(res.statusCode, res.body).toBe(201);
    expect(await readRun(t, res.json().runId)).toMatchObject({ input: { lang: 'en', keep: 1 } });
  });

  it('spec 4.1 / part 7 via zones.md: an unreachable runtime is 500 {runId}, and the run is failed', async () => {
    const down = await seedAgent(t, { orgId, runtime: { kind: 'task', baseUrl: await unusedUrl(), apiKey: 'k' } });
    const res = await zone(down, 'POST', '/runs', {});
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ code: 'runtime_failed', runId: expect.any(Number) });
    expect(await readRun(t, res.json().runId)).toMatchObject({ status: 'failed', created_by: user });
  });

  it('zones.md: an input that is not an object is 400 naming the field; nothing is written', async () => {
    const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs');
    const res = await zone(a, 'POST', '/runs', { input: [1, 2] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('input');
    expect((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs')).rows[0]!.n).toBe(before.rows[0]!.n);
  });
});

describe('zones.md POST /runs/wait (as 4.2) and /runs/download (as 4.3)', () => {
  it("zones.md: /runs/wait answers 4.2's 200 with the run, created by the token's user", async () => {
    const w = await workflowAgent(t, n8n, { json: { summary: 'done', outputs: 2 }, executionIdHeader: true }, { orgId, allow_external_triggers: false });
    const res = await zone(w, 'POST', '/runs/wait', { input: { q: 1 }, timeoutMs: 10_000 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ agentId: w.agent.id, status: 'completed', output_data: { summary: 'done', outputs: 2 }, outputs: 2, error: null });
    expect(await readRun(t, res.json().runId)).toMatchObject({ created_by: user, source: 'zone_wait' });
  });

  it('zones.md: /runs/wait past the window is 202 {runId, agentId, status, timedOut:true} on a task runtime', async () => {
    const res = await zone(a, 'POST', '/runs/wait', { timeoutMs: 200 });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ runId: expect.any(Number), agentId: a.agent.id, status: expect.stringMatching(/queued|running/), timedOut: true });
  });

  it('zones.md: timeoutMs must be a positive integer (400 naming it)', async () => {
    const res = await zone(a, 'POST', '/runs/wait', { timeoutMs: -5 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('timeoutMs');
  });

  it('zones.md: /runs/download streams the file with X-Run-Id and Cache-Control no-store', async () => {
    const d = await workflowAgent(
      t,
      n8n,
      { binary: { contentType: 'application/pdf', size: 1000, inMemory: true }, headers: { 'content-disposition': 'attachment; filename="r.pdf"' } },
      { orgId, output_kind: 'file_download', allow_external_triggers: false },
    );
    // A real socket: the run is completed only once the response has flushed to a real client (spec 4.3).
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await request(`${base}/api/zones/agents/${d.agent.id}/runs/download`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await zoneToken(t, d.agent, user)}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('attachment; filename="r.pdf"');
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await res.body.arrayBuffer()).byteLength).toBe(1000);
    const runId = Number(res.headers['x-run-id']);
    await expect.poll(async () => (await readRun(t, runId))?.status).toBe('completed');
    expect(await readRun(t, runId)).toMatchObject({ created_by: user, source: 'zone_download', output_data: { kind: 'file_download', sizeBytes: 1000 } });
  });

  it("zones.md: /runs/download on an agent whose output_kind is not file_download is 422, nothing started", async () => {
    const res = await zone(b, 'POST', '/runs/download', {});
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('agent_unavailable');
  });
});
