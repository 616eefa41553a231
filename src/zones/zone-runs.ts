// Runs as zone apps see and start them (zones.md). Zone apps are part of the platform: allow_external_triggers
// does not apply, and the run is attributed to the token's user (already checked to be a member).
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { findRun } from '../runs/runs-repo.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import { errors } from '../errors.ts';
import { triggerInput } from '../runs/trigger-run.ts';
import { toSyncRunView, type SyncRunView } from '../runs/run-view.ts';
import { startRun, type StartRunResult } from '../runs/start-run.ts';
import { startAndAwait, type SyncOutcome } from '../sync/sync-wait.ts';
import { startDownload, type DownloadOutcome } from '../sync/download-run.ts';
import { waitWindowMs } from '../sync/wait-window.ts';
import { idempotently, type IdempotencyRequest, type KeyTaken } from '../runs/idempotency.ts';

export interface ZoneRunView extends SyncRunView {
  /** Only while the run is `waiting`: what the reviewer is shown (spec 4.8 `waiting`). */
  waiting?: { description: string; url: string | null; output: unknown };
}

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

export interface ZoneRunRequest {
  agent: AgentRow;
  userId: string;
  input?: object;
  /** This request's rate-limit count, made by the run's insert. */
  guard?: RateGuard | null;
  /** The request's Idempotency-Key, scoped to the agent like the ingest endpoints' (decisions.md). */
  idempotency?: IdempotencyRequest | null;
}

/** zones.md `POST …/runs` (as 4.1). */
export async function startZoneRun(ctx: AppContext, req: ZoneRunRequest): Promise<StartRunResult | OverLimit | KeyTaken> {
  return idempotently(ctx, req.agent.id, req.idempotency, req.guard, (keyClaim) =>
    startRun(ctx, { agent: req.agent, input: triggerInput(req.agent, req.input), createdBy: req.userId, source: 'zone', guard: req.guard, keyClaim }),
  );
}

export interface ZoneSyncRequest extends ZoneRunRequest {
  timeoutMs?: number;
  /** Fires when the caller disconnects: ends the wait, never the run. */
  callerGone?: AbortSignal;
}

/** zones.md `POST …/runs/wait` (as 4.2, window per 8.3). */
export async function startZoneRunAndWait(ctx: AppContext, req: ZoneSyncRequest): Promise<SyncOutcome | KeyTaken> {
  const windowMs = waitWindowMs({ timeoutMs: req.timeoutMs, runningTimeoutMs: req.agent.running_timeout_ms });
  return idempotently(ctx, req.agent.id, req.idempotency, req.guard, (keyClaim) =>
    startAndAwait(
      ctx,
      { agent: req.agent, input: triggerInput(req.agent, req.input), createdBy: req.userId, source: 'zone_wait', guard: req.guard, keyClaim },
      { windowMs, signal: req.callerGone },
    ),
  );
}

/** zones.md `POST …/runs/download` (as 4.3): the agent must produce files (422 otherwise). */
export async function startZoneDownload(ctx: AppContext, req: ZoneSyncRequest): Promise<DownloadOutcome | KeyTaken> {
  if (req.agent.output_kind !== 'file_download') throw errors.agentUnavailable('agent output_kind is not file_download');
  return idempotently(ctx, req.agent.id, req.idempotency, req.guard, (keyClaim) =>
    startDownload(ctx, req.agent, {
      input: triggerInput(req.agent, req.input),
      createdBy: req.userId,
      windowMs: waitWindowMs({ timeoutMs: req.timeoutMs, runningTimeoutMs: req.agent.running_timeout_ms }),
      source: 'zone_download',
      callerGone: req.callerGone,
      guard: req.guard,
      keyClaim,
    }),
  );
}
