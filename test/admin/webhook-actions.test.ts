// admin-api.md "Webhook actions" (spec part 6; decisions.md "Events"): the signing secret is shown once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows } from '../helpers/fixtures.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import { signWebhook, verifyWebhook } from '../../src/events/standard-webhooks.ts';
import { auditActions, call, expectInvalid, newAgent, ok } from './admin-helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('webhook actions', () => {
  it('admin-api.md: POST answers 201 {id, on_state, url, signing_secret}; the secret is sealed and signs deliveries', async () => {
    const agent = await newAgent(t);
    const body = await ok(t, 201, 'POST', `/agents/${agent.id}/webhook-actions`, { on_state: 'completed', url: 'https://hooks.example.test/done?x=1' });
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), on_state: 'completed', url: 'https://hooks.example.test/done?x=1', signing_secret: expect.stringMatching(/^whsec_/) });
    const { rows } = await t.db.query<{ signing_secret_enc: string }>('SELECT signing_secret_enc FROM webhook_actions WHERE id = $1', [body.id]);
    const secret = t.ctx.secrets.open(rows[0]!.signing_secret_enc, sealedAt('webhook_actions', 'signing_secret_enc', body.id));
    expect(secret).toBe(body.signing_secret);
    const headers = signWebhook({ id: 'msg_1', timestamp: new Date(), body: '{}', secret });
    expect(verifyWebhook(headers, '{}', body.signing_secret, new Date())).toBe(true);
  });

  it('decisions.md events: every on_state is accepted; the list shows actions without their secrets', async () => {
    const agent = await newAgent(t);
    const secrets: string[] = [];
    for (const on_state of ['completed', 'failed', 'cancelled', 'waiting']) {
      secrets.push((await ok(t, 201, 'POST', `/agents/${agent.id}/webhook-actions`, { on_state, url: `http://receiver.test/${on_state}` })).signing_secret);
    }
    const list = await ok(t, 200, 'GET', `/agents/${agent.id}/webhook-actions`);
    expect(list.data.map((a: { on_state: string }) => a.on_state)).toEqual(['completed', 'failed', 'cancelled', 'waiting']);
    expect(list.data[0]).toEqual({ id: expect.any(String), agent_id: agent.id, on_state: 'completed', url: 'http://receiver.test/completed', signing_secret_set: true, created_at: expect.any(String) });
    const scanned = JSON.stringify([list, await auditActions(t, agent.id)]) + t.logs.join('');
    for (const s of secrets) expect(scanned).not.toContain(s);
  });

  it('admin-api.md: bad bodies are 400 naming the field; url must be absolute http(s)', async () => {
    const agent = await newAgent(t);
    const url = `/agents/${agent.id}/webhook-actions`;
    const before = await countRows(t, 'webhook_actions');
    expectInvalid(await call(t, 'POST', url, { on_state: 'started', url: 'https://x.test' }), 'body.on_state');
    expectInvalid(await call(t, 'POST', url, { url: 'https://x.test' }), 'body.on_state');
    expectInvalid(await call(t, 'POST', url, { on_state: 'completed' }), 'body.url');
    for (const bad of ['x.test/hook', 'ftp://x.test', '//x.test/hook', 'https://u:p@x.test', 'https://x.test/' + 'a'.repeat(3000)]) {
      expectInvalid(await call(t, 'POST', url, { on_state: 'completed', url: bad }), 'body.url');
    }
    expectInvalid(await call(t, 'POST', url, { on_state: 'completed', url: 'https://x.test', signing_secret: 'mine' }), 'body.signing_secret');
    expect(await countRows(t, 'webhook_actions')).toBe(before);
  });

  it('admin-api.md: DELETE answers 204, then 404; unknown agents and ids are 404; both writes are audited', async () => {
    const agent = await newAgent(t);
    const { id } = await ok(t, 201, 'POST', `/agents/${agent.id}/webhook-actions`, { on_state: 'failed', url: 'https://x.test/h' });
    expect(await ok(t, 204, 'DELETE', `/webhook-actions/${id}`)).toBeNull();
    expect((await call(t, 'DELETE', `/webhook-actions/${id}`)).statusCode).toBe(404);
    expect((await call(t, 'DELETE', '/webhook-actions/not-a-uuid')).statusCode).toBe(404);
    expect((await call(t, 'POST', '/agents/999999/webhook-actions', { on_state: 'failed', url: 'https://x.test/h' })).statusCode).toBe(404);
    expect((await call(t, 'GET', '/agents/abc/webhook-actions')).statusCode).toBe(404);
    const entries = (await auditActions(t, agent.id)).filter((e) => e.action.startsWith('webhook_action.'));
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['webhook_action.deleted', { webhook_action_id: id, on_state: 'failed' }],
      ['webhook_action.created', { webhook_action_id: id, on_state: 'failed' }],
    ]);
  });
});
