// Puts runs into `waiting` the way the spec's callback would (spec 4.8), straight through the runs repository so
// these suites do not depend on the callback route's own suite.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestApp } from '../helpers/test-app.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import type { RecordedRequest } from '../fakes/fake-http-server.ts';
import { insertRun, type WaitState } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';

/**
 * `wait` null: waiting with no pending token (as an ingested `waiting` run has). `externalRunId`: the run's id at the
 * runtime — for an n8n run, the execution its resume URL names (the waitpoint checks they agree); null for none.
 */
export async function waitingRun(
  t: TestApp, agentId: number, wait: (Partial<WaitState> & { tokenId: string }) | null,
  externalRunId: string | null = `ext_${Math.random().toString(36).slice(2)}`,
): Promise<number> {
  const now = t.ctx.clock.now();
  const run = await insertRun(t.db, { agentId, status: 'running', source: 'trigger', now, startedAt: now, externalRunId });
  const waitState: WaitState | null = wait && { description: 'Approve the draft', url: null, output: null, ...wait };
  const res = await transition(t.db, run.id, 'waiting', 'waiting', now, { waitState }, { via: 'admin' });
  if (res.kind !== 'applied') throw new Error(`could not put run ${run.id} into waiting`);
  return run.id;
}

export async function auditFor(t: TestApp, runId: number) {
  const { rows } = await t.db.query<{ action: string; actor_user_id: string | null; agent_id: number; run_id: number; details: unknown }>(
    "SELECT action, actor_user_id, agent_id, run_id, details FROM audit_log WHERE run_id = $1 AND action = 'run.waitpoint_completed'",
    [runId],
  );
  return rows;
}

export async function runState(t: TestApp, runId: number) {
  const { rows } = await t.db.query<{ status: string; wait_state: unknown }>('SELECT status, wait_state FROM runs WHERE id = $1', [runId]);
  return rows[0]!;
}

/**
 * A Trigger.dev fake whose waitpoint inspections can be held at the gate, so a test can line two requests (or a
 * request and a callback) up at exactly the point it means, without sleeping.
 */
export class GatedTriggerDevFake extends TriggerDevFake {
  #held: Array<() => void> = [];
  #waiters: Array<{ n: number; resolve: () => void }> = [];
  #gateClosed = false;
  /** Complete calls are applied, then the connection is cut before the answer: a lost answer. */
  dropCompleteAnswers = false;

  holdInspections(): void {
    this.#gateClosed = true;
  }

  /** Resolves once `n` inspections are held at the gate. */
  async held(n: number): Promise<void> {
    if (this.#held.length >= n) return;
    await new Promise<void>((resolve) => this.#waiters.push({ n, resolve }));
  }

  release(): void {
    this.#gateClosed = false;
    for (const go of this.#held.splice(0)) go();
  }

  protected override async handle(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): Promise<void> {
    if (this.#gateClosed && req.method === 'GET' && /^\/api\/v1\/waitpoints\/tokens\/[^/]+$/.test(rec.path)) {
      await new Promise<void>((go) => {
        this.#held.push(go);
        for (const w of this.#waiters.filter((x) => this.#held.length >= x.n)) w.resolve();
      });
    }
    const complete = /^\/api\/v1\/waitpoints\/tokens\/([^/]+)\/complete$/.exec(rec.path);
    if (this.dropCompleteAnswers && req.method === 'POST' && complete) {
      const token = this.token(complete[1]!);
      token.completeCalls += 1;
      if (token.status === 'WAITING') Object.assign(token, { status: 'COMPLETED', data: (rec.body as { data?: unknown }).data, completedAt: new Date() });
      req.socket.destroy();
      return;
    }
    return super.handle(req, res, rec);
  }
}
