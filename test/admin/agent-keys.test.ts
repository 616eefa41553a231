// admin-api.md "Agents": key rotation (the old value stops working at once) and the audited webhook token reveal
// (spec 2.1 webhook_token "can be revealed, copied and rotated"; spec part 5 lifetimes "until rotated").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { secretMatches } from '../../src/lib/secrets.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import { auditActions, call, newAgent, ok } from './admin-helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('POST /agents/{id}/keys/{kind}/rotate', () => {
  it('spec part 5: a rotated ingest key stops working at once, even where the agent was cached', async () => {
    const agent = await newAgent(t, { allow_external_triggers: true });
    const old = agent.ingest_api_key;
    expect(secretMatches(old, (await t.ctx.agents.get(agent.id))!.ingest_key_digest)).toBe(true); // cached now
    const body = await ok(t, 200, 'POST', `/agents/${agent.id}/keys/ingest/rotate`);
    expect(body).toEqual({ kind: 'ingest', value: expect.stringMatching(/^ars_ingest_/) });
    const row = (await t.ctx.agents.get(agent.id))!;
    expect(secretMatches(old, row.ingest_key_digest)).toBe(false);
    expect(secretMatches(body.value, row.ingest_key_digest)).toBe(true);
    // Through the ingest context itself: the old key is refused by its auth hook.
    const url = `/api/agents/${agent.id}/runs/register`;
    const payload = { externalRunId: 'rotation-check' };
    expect((await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${old}` }, payload })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${body.value}` }, payload })).statusCode).not.toBe(401);
  });

  it('spec part 5: a rotated agent key stops resolving the agent at once, and the sealed copy follows', async () => {
    const agent = await newAgent(t);
    const old = agent.agent_api_key;
    expect((await t.ctx.agents.byAgentKey(old))?.id).toBe(agent.id); // cached now
    const { value } = await ok(t, 200, 'POST', `/agents/${agent.id}/keys/agent/rotate`);
    expect(await t.ctx.agents.byAgentKey(old)).toBeNull();
    const row = (await t.ctx.agents.byAgentKey(value))!;
    expect(row.id).toBe(agent.id);
    expect(t.ctx.secrets.open(row.agent_key_enc, sealedAt('agents', 'agent_key_enc', row.id))).toBe(value);
  });

  it('spec 2.1: rotating the webhook token replaces it; the reveal shows the new one', async () => {
    const agent = await newAgent(t, { allow_webhook_triggers: true });
    const { value } = await ok(t, 200, 'POST', `/agents/${agent.id}/keys/webhook/rotate`);
    expect(value).toMatch(/^ars_whk_/);
    const row = (await t.ctx.agents.get(agent.id))!;
    expect(secretMatches(agent.webhook_token, row.webhook_token_digest)).toBe(false);
    expect(secretMatches(value, row.webhook_token_digest)).toBe(true);
    expect(await ok(t, 200, 'POST', `/agents/${agent.id}/webhook-token`)).toEqual({ webhook_token: value });
  });

  it('spec part 5: rotating the zone secret replaces the signing secret', async () => {
    const agent = await newAgent(t);
    const { kind, value } = await ok(t, 200, 'POST', `/agents/${agent.id}/keys/zone/rotate`);
    expect(kind).toBe('zone');
    const row = (await t.ctx.agents.get(agent.id))!;
    expect(t.ctx.secrets.open(row.zone_secret_enc, sealedAt('agents', 'zone_secret_enc', row.id))).toBe(value);
    expect(value).not.toBe(agent.zone_jwt_secret);
  });

  it('decisions.md audit: each rotation is audited as agent.key_rotated {kind}, never with the value', async () => {
    const agent = await newAgent(t);
    const values: string[] = [];
    for (const kind of ['ingest', 'agent', 'webhook', 'zone']) values.push((await ok(t, 200, 'POST', `/agents/${agent.id}/keys/${kind}/rotate`)).value);
    const rotations = (await auditActions(t, agent.id)).filter((e) => e.action === 'agent.key_rotated');
    expect(rotations.map((e) => e.details)).toEqual([{ kind: 'zone' }, { kind: 'webhook' }, { kind: 'agent' }, { kind: 'ingest' }]);
    const scanned = JSON.stringify([await ok(t, 200, 'GET', `/agents/${agent.id}`), rotations]) + t.logs.join('');
    for (const v of values) expect(scanned).not.toContain(v);
  });

  it('admin-api.md: an unknown kind is 400 naming it; an unknown agent is 404', async () => {
    const agent = await newAgent(t);
    const res = await call(t, 'POST', `/agents/${agent.id}/keys/master/rotate`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('kind');
    expect((await call(t, 'POST', '/agents/999999/keys/ingest/rotate')).statusCode).toBe(404);
    expect((await call(t, 'POST', '/agents/x/keys/ingest/rotate')).statusCode).toBe(404);
    expect((await auditActions(t)).some((e) => e.action === 'agent.key_rotated' && e.agent_id === 999_999)).toBe(false);
  });
});

describe('POST /agents/{id}/webhook-token', () => {
  it('admin-api.md: reveals the token and audits the reveal', async () => {
    const agent = await newAgent(t, { allow_webhook_triggers: true });
    const res = await call(t, 'POST', `/agents/${agent.id}/webhook-token`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ webhook_token: agent.webhook_token });
    expect(res.headers['cache-control']).toBe('no-store');
    const reveals = (await auditActions(t, agent.id)).filter((e) => e.action === 'agent.webhook_token_revealed');
    expect(reveals).toHaveLength(1);
    expect(JSON.stringify(reveals) + t.logs.join('')).not.toContain(agent.webhook_token);
  });

  it('admin-api.md: an agent without a webhook token is 404 (enabling webhook triggers creates one); unknown agent 404', async () => {
    const agent = await newAgent(t);
    const res = await call(t, 'POST', `/agents/${agent.id}/webhook-token`);
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toContain('allow_webhook_triggers');
    expect((await call(t, 'POST', '/agents/999999/webhook-token')).statusCode).toBe(404);
    expect((await auditActions(t, agent.id)).some((e) => e.action === 'agent.webhook_token_revealed')).toBe(false);
  });
});
