// Runs as zone apps see them (zones.md `GET …/runs/{runId}`). Zone apps start runs through the one start pipeline
// (runs/begin-run.ts, fronts `zone`, `zone_wait`, `zone_download`).
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { findRun } from '../runs/runs-repo.ts';
import { errors } from '../errors.ts';
import type { Static } from 'typebox';
import { toSyncRunView } from '../runs/run-view.ts';
import type { ZoneRun } from '../schemas/responses.ts';

/** The `ZoneRun` component: spec 4.2's body, plus `waiting` while the run waits (what the reviewer is shown). */
export type ZoneRunView = Static<typeof ZoneRun>;

/** zones.md `GET …/runs/{runId}`: 404 for an unknown run or one of another agent. */
export async function zoneRunView(ctx: AppContext, agent: AgentRow, runId: number | null): Promise<ZoneRunView> {
  const run = runId === null ? null : await findRun(ctx.db, runId);
  if (!run || Number(run.agent_id) !== agent.id) throw errors.notFound('run');
  const view: ZoneRunView = toSyncRunView(run);
  if (run.status === 'waiting') {
    const w = run.wait_state;
    view.waiting = { description: w?.description ?? '', url: w?.url ?? null, output: w?.output ?? null };
  }
  return view;
}
