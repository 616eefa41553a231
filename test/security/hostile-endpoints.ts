// The endpoints of the hostile-input catalogue (hostile-input.test.ts): every route that stores or forwards a
// request body, where each hostile value goes in its body, and how to read back what was stored when the value is
// one the project stores rather than refuses.
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/test-app.ts';
import { ADMIN_TOKEN } from '../helpers/test-app.ts';
import type { SeededAgent } from '../helpers/fixtures.ts';
import type { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { waitingRun } from '../runs/waitpoint-helpers.ts';

/** What a hostile value is, which decides where an endpoint puts it. */
export type Kind = 'deep' | 'surrogate' | 'nul' | 'huge' | 'bigint' | 'date' | 'id';

/** Where the value went: free-form JSON (input, output, payload, default_input, extras), a typed field, or the body. */
export type Slot = 'free' | 'string' | 'date' | 'id' | 'uuid' | 'url' | 'webhook' | 'alert';

export interface Prepared {
  url: string;
  headers: Record<string, string>;
  /** Reads back what the request stored (or forwarded) for the value, once it was accepted (webhooks: the whole body). */
  readBack(res: LightMyRequestResponse): Promise<unknown>;
}

export interface Endpoint {
  name: string;
  method: 'POST' | 'PATCH' | 'PUT';
  /** Status and code of a refused body: 400 invalid_body unless the spec says 422. */
  refusal: [number, string];
  /** Status of an accepted request. */
  accepted: number;
  /** The body limit: the configured JSON maximum, or 1 MiB (webhooks, alerts). */
  limit: 'json' | 'mib';
  /** The slot a value of this kind goes to (free-form unless the endpoint has a field of that kind). */
  slot(kind: Kind): Slot;
  /** The raw JSON text of the body carrying `value` (raw JSON text too) in `slot`. */
  body(slot: Slot, value: string): string;
  /** Fresh resources for one request (a run to call back on, a waiting run), its URL and headers. */
  prepare(): Promise<Prepared>;
}

export interface Tenants {
  t: TestApp;
  trig: TriggerDevFake;
  /** Task agent on the Trigger.dev fake: trigger, trigger-and-wait, register, webhook, callback, waitpoint, zone runs. */
  task: SeededAgent;
  /** Workflow agent on the n8n fake whose answer is a file: trigger-and-download, zone download. */
  file: SeededAgent;
  /** Workflow agent on the n8n fake answering JSON, webhooks on: webhook-and-wait; its runtime takes alerts. */
  hook: SeededAgent & { alertSecret: string };
  standalone: SeededAgent;
  orgId: string;
  userId: string;
  zone: { task: string; file: string };
}

let seq = 0;
const uniq = (p: string) => `${p}-${process.pid}-${++seq}`;
const json = { 'content-type': 'application/json' };
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, ...json };

async function runRow(t: TestApp, id: number): Promise<Record<string, unknown>> {
  const { rows } = await t.db.query<Record<string, unknown>>('SELECT * FROM runs WHERE id = $1', [id]);
  return rows[0] ?? {};
}
async function one(t: TestApp, sql: string, params: unknown[]): Promise<Record<string, unknown>> {
  const { rows } = await t.db.query<Record<string, unknown>>(sql, params);
  return rows[0] ?? {};
}
const v = (o: unknown): unknown => (o as { v?: unknown } | null)?.v;
const runIdOf = (res: LightMyRequestResponse): number => Number((res.json() as { runId: number }).runId);

/** Free-form endpoints: only dates and ids have no field of their own, so every value is data in `input`/…. */
const freeForm = () => 'free' as const;
/** Admin endpoints whose slot is a typed string field: numbers are not strings, text is stored as sent. */
const stringField = (kind: Kind): Slot => (kind === 'deep' ? 'free' : 'string');

/** `x` is filled in by the suite's beforeAll; endpoints read it only when they run. */
export function endpoints(x: Tenants): Endpoint[] {

  const ingest = (agent: () => SeededAgent, path: string, body: (slot: Slot, value: string) => string, refusal: [number, string], accepted: number, read: Prepared['readBack'], slot: Endpoint['slot'] = freeForm): Endpoint => ({
    name: `POST /api/agents/:agentId/runs/${path}`,
    method: 'POST', refusal, accepted, limit: 'json', slot, body,
    prepare: async () => ({ url: `/api/agents/${agent().agent.id}/runs/${path}`, headers: { ...agent().ingestAuth, ...json }, readBack: read }),
  });
  const zone = (path: string, agent: () => SeededAgent, token: () => string, body: Endpoint['body'], accepted: number, read: Prepared['readBack']): Endpoint => ({
    name: `POST /api/zones/agents/:agentId${path}`,
    method: 'POST', refusal: [400, 'invalid_body'], accepted, limit: 'json', slot: freeForm, body,
    prepare: async () => ({ url: `/api/zones/agents/${agent().agent.id}${path}`, headers: { authorization: `Bearer ${token()}`, ...json }, readBack: read }),
  });
  const inputOf = async (res: LightMyRequestResponse) => v((await runRow(x.t, runIdOf(res))).input);
  const inputOfHeader = async (res: LightMyRequestResponse) => v((await runRow(x.t, Number(res.headers['x-run-id']))).input);
  const input = (_slot: Slot, value: string) => `{"input":{"v":${value}}}`;
  const inputQuick = (_slot: Slot, value: string) => `{"input":{"v":${value}},"timeoutMs":1}`;
  const latestRun = async (agentId: number) => one(x.t, 'SELECT * FROM runs WHERE agent_id = $1 ORDER BY id DESC LIMIT 1', [agentId]);
  const waitpoint = async (zoneToken: string | null): Promise<Prepared> => {
    const token = x.trig.createWaitpointToken();
    const runId = await waitingRun(x.t, x.task.agent.id, { tokenId: token.id });
    return zoneToken === null
      ? { url: `/api/runs/${runId}/waitpoint`, headers: { ...x.task.agentAuth, ...json }, readBack: async () => v(x.trig.token(token.id).data) }
      : { url: `/api/zones/agents/${x.task.agent.id}/runs/${runId}/waitpoint`, headers: { authorization: `Bearer ${zoneToken}`, ...json }, readBack: async () => v(x.trig.token(token.id).data) };
  };
  const adminWrite = (method: 'POST' | 'PATCH', name: string, url: () => Promise<string>, body: Endpoint['body'], slot: Endpoint['slot'], accepted: number, read: (res: LightMyRequestResponse, url: string) => Promise<unknown>): Endpoint => ({
    name: `${method} /api/admin${name}`, method, refusal: [400, 'invalid_body'], accepted, limit: 'json', slot, body,
    prepare: async () => {
      const u = await url();
      return { url: u, headers: admin, readBack: (res) => read(res, u) };
    },
  });
  const created = (res: LightMyRequestResponse) => res.json() as Record<string, unknown>;
  const newAgent = async () => {
    const res = await x.t.app.inject({ method: 'POST', url: '/api/admin/agents', headers: admin, payload: { org_id: x.orgId, name: uniq('agent'), managed_by: 'standalone' } });
    return (res.json() as { id: number }).id;
  };
  const newConnection = async () => {
    const res = await x.t.app.inject({ method: 'POST', url: `/api/admin/agents/${x.standalone.agent.id}/connections`, headers: admin, payload: { integration_id: uniq('int'), type: 'api_key', value: 'v' } });
    return (res.json() as { id: string }).id;
  };
  const newRuntime = async () => {
    const res = await x.t.app.inject({ method: 'POST', url: '/api/admin/runtimes', headers: admin, payload: { org_id: x.orgId, name: uniq('rt'), kind: 'task', base_url: 'http://127.0.0.1:9' } });
    return (res.json() as { id: number }).id;
  };

  return [
    // Spec 4.1-4.5: the ingest-key endpoints.
    ingest(() => x.task, 'trigger', input, [400, 'invalid_body'], 201, inputOf),
    ingest(() => x.task, 'trigger-and-wait', inputQuick, [422, 'validation_failed'], 202, inputOf),
    ingest(() => x.file, 'trigger-and-download', input, [400, 'invalid_body'], 200, inputOfHeader),
    ingest(
      () => x.task, 'register',
      (slot, value) => (slot === 'id' ? `{"externalRunId":${value}}` : `{"externalRunId":"${uniq('ext')}","input":{"v":${value}}}`),
      [422, 'validation_failed'], 201,
      async (res) => {
        const run = await runRow(x.t, runIdOf(res));
        return run.external_run_id === null || !String(run.external_run_id).startsWith('ext-') ? run.external_run_id : v(run.input);
      },
      (kind) => (kind === 'id' ? 'id' : 'free'),
    ),
    ingest(
      () => x.standalone, 'ingest',
      (slot, value) =>
        slot === 'id' ? `{"externalRunId":${value},"status":"running"}`
          : slot === 'date' ? `{"externalRunId":"${uniq('ext')}","status":"completed","startedAt":${value},"completedAt":${value}}`
            : `{"externalRunId":"${uniq('ext')}","status":"completed","output":{"v":${value}}}`,
      [400, 'invalid_body'], 200,
      async (res) => {
        const run = await runRow(x.t, runIdOf(res));
        return String(run.external_run_id).startsWith('ext-') ? v(run.output_data) : run.external_run_id;
      },
      (kind) => (kind === 'id' ? 'id' : kind === 'date' ? 'date' : 'free'),
    ),

    // Spec 4.6/4.7: any body; the run's input is the request (decisions.md "webhook shaping").
    {
      name: 'POST /api/agents/:agentId/runs/webhook/:webhookToken', method: 'POST', refusal: [400, 'invalid_body'], accepted: 202, limit: 'mib',
      slot: () => 'webhook', body: (_s, value) => `{"v":${value}}`,
      prepare: async () => ({
        url: `/api/agents/${x.task.agent.id}/runs/webhook/${x.task.webhookToken}`, headers: json,
        readBack: async (res) => ((await runRow(x.t, runIdOf(res))).input as { webhook: { body: unknown } }).webhook.body,
      }),
    },
    {
      name: 'POST /api/agents/:agentId/runs/webhook-and-wait/:webhookToken', method: 'POST', refusal: [400, 'invalid_body'], accepted: 200, limit: 'mib',
      slot: () => 'webhook', body: (_s, value) => `{"v":${value}}`,
      prepare: async () => ({
        url: `/api/agents/${x.hook.agent.id}/runs/webhook-and-wait/${x.hook.webhookToken}`, headers: json,
        readBack: async () => ((await latestRun(x.hook.agent.id)).input as { webhook: { body: unknown } }).webhook.body,
      }),
    },

    // Spec 4.8/4.9: the agent-key endpoints. Each request gets a run of its own.
    {
      name: 'POST /api/runs/:runId/callback', method: 'POST', refusal: [422, 'validation_failed'], accepted: 200, limit: 'json',
      slot: (kind) => (kind === 'id' ? 'id' : 'free'),
      body: (slot, value) => (slot === 'id' ? `{"type":"waiting","tokenId":${value},"description":"d"}` : `{"type":"output","output":{"v":${value}}}`),
      prepare: async () => {
        const { rows } = await x.t.db.query<{ id: number }>("INSERT INTO runs (agent_id, status, source, started_at) VALUES ($1, 'running', 'trigger', now()) RETURNING id", [x.task.agent.id]);
        const runId = rows[0]!.id;
        return {
          url: `/api/runs/${runId}/callback`, headers: { ...x.task.agentAuth, ...json },
          readBack: async () => {
            const run = await runRow(x.t, runId);
            return run.status === 'waiting' ? (run.wait_state as { tokenId: string }).tokenId : v(run.output_data);
          },
        };
      },
    },
    {
      name: 'POST /api/runs/:runId/waitpoint', method: 'POST', refusal: [400, 'invalid_body'], accepted: 200, limit: 'json',
      slot: freeForm, body: (_s, value) => `{"payload":{"v":${value}}}`, prepare: () => waitpoint(null),
    },

    // Runtime alerts (decisions.md): what a runtime sends; here the execution id of an n8n error workflow.
    {
      name: 'POST /api/runtimes/:runtimeId/alerts', method: 'POST', refusal: [400, 'invalid_body'], accepted: 200, limit: 'mib',
      slot: () => 'alert', body: (_s, value) => `{"execution":{"id":${value},"error":{"message":"boom"}}}`,
      prepare: async () => ({
        url: `/api/runtimes/${x.hook.runtimeId}/alerts`, headers: { authorization: `Bearer ${x.hook.alertSecret}`, ...json },
        readBack: async () => {
          const row = await one(x.t, 'SELECT alert_id FROM alert_receipts WHERE runtime_id = $1 ORDER BY received_at DESC LIMIT 1', [x.hook.runtimeId]);
          return String(row.alert_id).replace(/^execution:/, '');
        },
      }),
    },

    // zones.md: the zone-JWT endpoints.
    zone('/runs', () => x.task, () => x.zone.task, input, 201, inputOf),
    zone('/runs/wait', () => x.task, () => x.zone.task, inputQuick, 202, inputOf),
    zone('/runs/download', () => x.file, () => x.zone.file, input, 200, inputOfHeader),
    {
      name: 'POST /api/zones/agents/:agentId/runs/:runId/waitpoint', method: 'POST', refusal: [400, 'invalid_body'], accepted: 200, limit: 'json',
      slot: freeForm, body: (_s, value) => `{"payload":{"v":${value}}}`, prepare: () => waitpoint(x.zone.task),
    },

    // admin-api.md: every admin write.
    adminWrite('POST', '/orgs', async () => '/api/admin/orgs', (_s, value) => `{"name":${value}}`, stringField, 201, async (res) => created(res).name),
    adminWrite('POST', '/users', async () => '/api/admin/users', (_s, value) => `{"email":"${uniq('u')}@example.test","name":${value}}`, stringField, 201, async (res) => created(res).name),
    adminWrite('POST', '/orgs/:id/members', async () => `/api/admin/orgs/${x.orgId}/members`, (_s, value) => `{"user_id":${value}}`, (kind) => (kind === 'deep' ? 'free' : 'uuid'), 201, async () => null),
    adminWrite('POST', '/users/:id/tokens', async () => `/api/admin/users/${x.userId}/tokens`, (_s, value) => `{"name":${value}}`, stringField, 201,
      async (res) => (await one(x.t, 'SELECT name FROM user_tokens WHERE id = $1', [created(res).id])).name),
    adminWrite('POST', '/runtimes', async () => '/api/admin/runtimes', (_s, value) => `{"org_id":"${x.orgId}","name":${value},"kind":"task","base_url":"http://127.0.0.1:9"}`, stringField, 201, async (res) => created(res).name),
    adminWrite('PATCH', '/runtimes/:id', async () => `/api/admin/runtimes/${await newRuntime()}`, (_s, value) => `{"name":${value}}`, stringField, 200, async (res) => created(res).name),
    adminWrite('POST', '/agents', async () => '/api/admin/agents', (_s, value) => `{"org_id":"${x.orgId}","name":"${uniq('agent')}","managed_by":"standalone","default_input":{"v":${value}}}`, freeForm, 201,
      async (res) => v(created(res).default_input)),
    adminWrite('PATCH', '/agents/:id', async () => `/api/admin/agents/${await newAgent()}`, (_s, value) => `{"default_input":{"v":${value}}}`, freeForm, 200, async (res) => v(created(res).default_input)),
    adminWrite('POST', '/agents/:id/connections', async () => `/api/admin/agents/${x.standalone.agent.id}/connections`,
      (slot, value) => (slot === 'date'
        ? `{"integration_id":"${uniq('int')}","type":"oauth","access_token":"t","expires_at":${value}}`
        : slot === 'id' ? `{"integration_id":${value},"type":"api_key","value":"v"}`
          : `{"integration_id":"${uniq('int')}","type":"api_key","value":"v","extras":{"v":${value}}}`),
      (kind) => (kind === 'date' ? 'date' : kind === 'id' ? 'id' : 'free'), 201,
      async (res) => {
        const row = await one(x.t, 'SELECT integration_id, extras FROM connections WHERE id = $1', [created(res).id]);
        return String(row.integration_id).startsWith('int-') ? v(row.extras) : row.integration_id;
      }),
    adminWrite('PATCH', '/connections/:id', async () => `/api/admin/connections/${await newConnection()}`, (_s, value) => `{"extras":{"v":${value}}}`, freeForm, 200,
      async (_res, url) => v((await one(x.t, 'SELECT extras FROM connections WHERE id = $1', [url.split('/').pop()])).extras)),
    adminWrite('POST', '/agents/:id/webhook-actions', async () => `/api/admin/agents/${x.standalone.agent.id}/webhook-actions`, (_s, value) => `{"on_state":"completed","url":${value}}`,
      (kind) => (kind === 'deep' ? 'free' : 'url'), 201, async () => null),
  ];
}
