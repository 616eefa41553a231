// Local stand-ins for both runtimes: the fakes the test suite trusts (test/fakes/, speaking the real n8n and
// Trigger.dev APIs over HTTP), each loaded with the demo's workflows and tasks. They listen on free loopback ports.
import { N8nFake } from '../../test/fakes/n8n-fake.ts';
import { TriggerDevFake, type FakeTriggerRun } from '../../test/fakes/trigger-dev-fake.ts';
import { startZoneApp, type ZoneApp } from './zone-app.ts';

/** The workflow paths and task ids the demo's agents name as their `target`. */
export const TARGETS = {
  enrichLead: 'enrich-lead',
  exportLeads: 'export-leads',
  summarize: 'summarize',
  reviewDraft: 'review-draft',
} as const;

/**
 * What a Trigger.dev project's environment gives its tasks (README "A Trigger.dev task": the agent key is set
 * there, never sent in a payload). Filled in once the agents exist.
 */
export interface TaskEnvironment {
  serviceUrl: string;
  /** ARS_AGENT_API_KEY of the review task's agent. */
  reviewAgentKey: string;
}

export interface StandIns {
  n8n: N8nFake;
  trigger: TriggerDevFake;
  /** The lead enricher's zone app (zone_app_url), opened inside the console. */
  zoneApp: ZoneApp;
  setTaskEnvironment(env: TaskEnvironment): void;
  /** Resolves once the review task of this platform run has reported `waiting` (and the service said 200). */
  pausedForReview(runId: number): Promise<void>;
  stop(): Promise<void>;
}

type Payload = { runId?: number; input?: Record<string, unknown> } | undefined;

export async function startStandIns(): Promise<StandIns> {
  const n8n = new N8nFake();
  n8n.registerWorkflow(TARGETS.enrichLead, ({ body }) => ({ executionIdHeader: true, json: enrichLead((body as Payload)?.input ?? {}) }));
  n8n.registerWorkflow(TARGETS.exportLeads, () => ({
    executionIdHeader: true,
    text: LEADS_CSV,
    // n8n does not set Content-Disposition by itself: the workflow author adds it (README "An n8n workflow").
    headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="leads.csv"', 'x-outputs': '3' },
  }));

  const trigger = new TriggerDevFake();
  let env: TaskEnvironment | null = null;
  const paused = new Map<number, Promise<void>>();
  trigger.registerTask(TARGETS.summarize, (run) => {
    trigger.completeRun(run.id, summarize((run.payload as Payload)?.input ?? {}), run.createdAt, new Date());
  });
  trigger.registerTask(TARGETS.reviewDraft, (run) => {
    const runId = (run.payload as Payload)?.runId;
    if (!env || typeof runId !== 'number') return void trigger.setRun(run.id, { status: 'FAILED', error: { message: 'no service to report to' } });
    const review = reviewDraft(trigger, env, run, runId);
    paused.set(runId, review.paused);
    review.done.catch((err: Error) => console.error(`review-draft task of run ${runId}: ${err.message}`));
  });

  await Promise.all([n8n.start(), trigger.start()]);
  const zoneApp = await startZoneApp(() => env?.serviceUrl ?? 'http://127.0.0.1:0');
  return {
    n8n,
    trigger,
    zoneApp,
    setTaskEnvironment: (e) => void (env = e),
    pausedForReview: (runId) => paused.get(runId) ?? Promise.reject(new Error(`the review task never saw run ${runId}`)),
    stop: async () => void (await Promise.all([n8n.stop(), trigger.stop(), zoneApp.stop()])),
  };
}

const LEADS_CSV = 'company,domain,score\nInitech,initech.example,72\nGlobex,globex.example,64\nHooli,hooli.example,91\n';

/** The JSON workflow: a made-up but stable enrichment of a company name. */
function enrichLead(input: Record<string, unknown>): Record<string, unknown> {
  const company = typeof input.company === 'string' && input.company ? input.company : 'Initech';
  const score = [...company].reduce((sum, ch) => sum + ch.charCodeAt(0), 0) % 100;
  return { company, domain: `${company.toLowerCase().replace(/[^a-z0-9]+/g, '')}.example`, score, outputs: 1 };
}

function summarize(input: Record<string, unknown>): Record<string, unknown> {
  const text = typeof input.text === 'string' ? input.text : '';
  return { summary: text.split(/(?<=[.!?])\s/)[0]!.slice(0, 80), words: text.split(/\s+/).filter(Boolean).length, outputs: 1 };
}

/**
 * The review task, as a real one is written: draft, pause on a waitpoint token until a human answers through the
 * service's /waitpoint, then finish with the decision. It reports both steps through the callback, so the service
 * learns them at once instead of at its next poll.
 */
function reviewDraft(trigger: TriggerDevFake, env: TaskEnvironment, run: FakeTriggerRun, runId: number) {
  const input = (run.payload as Payload)?.input ?? {};
  const subject = typeof input.subject === 'string' ? input.subject : 'your question';
  const draft = `Thanks for asking about ${subject}. Here is what we found…`;
  const callback = async (body: Record<string, unknown>): Promise<void> => {
    const res = await fetch(`${env.serviceUrl}/api/runs/${runId}/callback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.reviewAgentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`callback ${String(body.type)} answered ${res.status}: ${await res.text()}`);
  };
  const token = trigger.createWaitpointToken();
  trigger.setRun(run.id, { status: 'WAITING', startedAt: new Date() });
  const paused = callback({ type: 'waiting', tokenId: token.id, description: `Approve the reply drafted about ${subject}?`, output: { draft } });
  const done = paused.then(async () => {
    const decision = (await trigger.waitForToken(token.id)) as { approved?: unknown } | undefined;
    const output = { draft, approved: decision?.approved === true, outputs: 1 };
    trigger.completeRun(run.id, output, run.startedAt, new Date());
    await callback({ type: 'output', output, outputs: 1, complete: true });
  });
  return { paused, done };
}
