// What the demo sets up, through the admin API and the run endpoints (never SQL), as an operator and the agents'
// callers would: an organization with a member who can sign in, one runtime per stand-in, an agent of each kind,
// and runs in each state a newcomer should see (completed, waiting for a human, failed).
import type { ServiceClient } from './service-client.ts';
import { TARGETS, type StandIns } from './stand-ins.ts';

export interface DemoAgent {
  id: number;
  name: string;
  /** Bearer for the ingest endpoints (trigger, trigger-and-wait, …, ingest). */
  ingestKey: string;
  /** Bearer for the runtime-facing endpoints (callback, waitpoint). */
  agentKey: string;
}

export interface DemoAgents {
  lead: DemoAgent; // n8n workflow answering JSON
  report: DemoAgent; // n8n workflow answering a file
  summary: DemoAgent; // Trigger.dev task that finishes at once
  review: DemoAgent; // Trigger.dev task that waits for a human
  sync: DemoAgent; // standalone: runs elsewhere and reports its runs
}

export interface DemoState {
  orgName: string;
  user: { email: string; token: string };
  agents: DemoAgents;
  runs: { completed: number[]; waiting: number; failed: number };
}

export async function seed(api: ServiceClient, adminToken: string, standIns: StandIns): Promise<DemoState> {
  const admin = { token: adminToken };
  const orgName = 'Acme';
  const org = await api.json('POST', '/api/admin/orgs', { ...admin, body: { name: orgName } });
  const email = 'ada@acme.example';
  const user = await api.json('POST', '/api/admin/users', { ...admin, body: { email, name: 'Ada Lovelace' } });
  await api.json('POST', `/api/admin/orgs/${org.id}/members`, { ...admin, body: { user_id: user.id, role: 'admin' } });
  const { token: userToken } = await api.json('POST', `/api/admin/users/${user.id}/tokens`, { ...admin, body: { name: 'demo' } });

  const runtime = async (name: string, kind: 'workflow' | 'task', baseUrl: string, apiKey: string): Promise<number> =>
    (await api.json('POST', '/api/admin/runtimes', { ...admin, body: { org_id: org.id, name, kind, base_url: baseUrl, api_key: apiKey } })).id;
  const n8n = await runtime('n8n (local stand-in)', 'workflow', standIns.n8n.url, standIns.n8n.apiKey);
  const trigger = await runtime('Trigger.dev (local stand-in)', 'task', standIns.trigger.url, standIns.trigger.secretKey);

  const agent = async (body: Record<string, unknown>): Promise<DemoAgent> => {
    const a = await api.json('POST', '/api/admin/agents', { ...admin, body: { org_id: org.id, ...body } });
    return { id: a.id, name: a.name, ingestKey: a.ingest_api_key, agentKey: a.agent_api_key };
  };
  // The shortest poll interval (10 s): the demo's runs end through answers and callbacks, polling is the backstop.
  const platform = { managed_by: 'platform', allow_external_triggers: true, poll_interval_s: 10 };
  const agents: DemoAgents = {
    lead: await agent({ ...platform, name: 'Lead enricher', runtime_id: n8n, target: TARGETS.enrichLead, zone_app_url: standIns.zoneApp.url }),
    report: await agent({ ...platform, name: 'Lead export', runtime_id: n8n, target: TARGETS.exportLeads, output_kind: 'file_download' }),
    summary: await agent({ ...platform, name: 'Summarizer', runtime_id: trigger, target: TARGETS.summarize }),
    review: await agent({ ...platform, name: 'Reply reviewer', runtime_id: trigger, target: TARGETS.reviewDraft }),
    sync: await agent({ managed_by: 'standalone', name: 'Nightly CRM sync' }),
  };
  // What an operator sets in the Trigger.dev project's environment once the agent exists.
  standIns.setTaskEnvironment({ serviceUrl: api.baseUrl, reviewAgentKey: agents.review.agentKey });

  return { orgName, user: { email, token: userToken }, agents, runs: await seedRuns(api, standIns, agents, user.id) };
}

async function seedRuns(api: ServiceClient, standIns: StandIns, agents: DemoAgents, userId: string): Promise<DemoState['runs']> {
  const run = (a: DemoAgent, endpoint: string, body: unknown, expect: number) =>
    api.json('POST', `/api/agents/${a.id}/runs/${endpoint}`, { token: a.ingestKey, body, expect });

  const lead = finished(await run(agents.lead, 'trigger-and-wait', { input: { company: 'Globex' }, userId }, 200));
  const file = await api.send('POST', `/api/agents/${agents.report.id}/runs/trigger-and-download`, { token: agents.report.ingestKey, body: {}, expect: 200 });
  await file.arrayBuffer(); // the run is stamped complete once the stream has been read to its end
  const summary = finished(await run(agents.summary, 'trigger-and-wait', { input: { text: 'Agents run on n8n and Trigger.dev. This service tracks them.' } }, 200));
  const review = await run(agents.review, 'trigger', { input: { subject: 'the March invoice' }, userId }, 201);
  const day = new Date(Date.now() - 86_400_000);
  const later = (ms: number) => new Date(day.getTime() + ms).toISOString();
  const synced = await run(agents.sync, 'ingest', {
    externalRunId: `sync-${day.toISOString().slice(0, 10)}`, status: 'completed', startedAt: later(0), completedAt: later(42_000),
    output: { contacts: 1284 }, outputs: 1284,
  }, 200);
  const failed = await run(agents.sync, 'ingest', {
    externalRunId: `sync-${new Date().toISOString().slice(0, 10)}`, status: 'failed', startedAt: later(86_000_000), completedAt: later(86_005_000),
    error: 'the CRM answered 503 three times; gave up',
  }, 200);
  // The review task reports `waiting` on its own; the demo is ready once it has.
  await standIns.pausedForReview(review.runId);
  return { completed: [lead.runId, Number(file.headers.get('x-run-id')), summary.runId, synced.runId], waiting: review.runId, failed: failed.runId };
}

/** A synchronous answer of 200 may still be a failed run: the demo stops rather than show one as done. */
function finished(answer: { runId: number; status: string; error: string | null }): { runId: number } {
  if (answer.status !== 'completed') throw new Error(`run ${answer.runId} ended ${answer.status}: ${answer.error}`);
  return answer;
}
