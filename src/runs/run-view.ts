// How a run row is shown. One presenter per audience, so every endpoint that shows a run shows the same fields:
// the admin API (admin-api.md "Runs and audit") and the synchronous 200 body (spec 4.2, reused by zones.md).
// Their types are the answer schemas' (schemas/responses.ts), so a presenter cannot drift from the document.
import type { Static } from 'typebox';
import type { RunRow } from './runs-repo.ts';
import type { TimelineEntry } from './run-timeline.ts';
import type { AdminRun, AdminRunDetail as AdminRunDetailSchema, ZoneRun } from '../schemas/responses.ts';

/** admin-api.md `GET /runs/{runId}`: exactly the fields of the `AdminRun` component. */
export type AdminRunView = Static<typeof AdminRun>;

/**
 * admin-api.md `GET /runs/{runId}`, the run detail (issue 14): the admin view, what a waiting run waits for (never
 * its token: for n8n it is a resume capability), every status it entered with the path that wrote it, and its
 * replay links.
 */
export type AdminRunDetail = Static<typeof AdminRunDetailSchema>;

export function toAdminRunDetail(run: RunRow, timeline: TimelineEntry[], replays: number[]): AdminRunDetail {
  const w = run.wait_state;
  return {
    ...toAdminRunView(run),
    wait: w ? { description: w.description, url: w.url ?? null, output: w.output ?? null } : null,
    timeline: timeline.map((e) => ({ status: e.status, via: e.via, at: new Date(e.at).toISOString() })),
    replay_of: run.replay_of === null || run.replay_of === undefined ? null : Number(run.replay_of),
    replays,
  };
}

/** Spec 4.2's 200 body, whatever the run's status (zones.md shows it for runs in flight too). */
export type SyncRunView = Omit<Static<typeof ZoneRun>, 'waiting'>;

/** The admin view is the sync view (spec 4.2) plus attribution and snapshots, with `error` as stored. */
export function toAdminRunView(run: RunRow): AdminRunView {
  return {
    ...toSyncRunView(run),
    error: run.error ?? null,
    created_by: run.created_by ?? null,
    source: run.source,
    external_run_id: run.external_run_id ?? null,
    // Always objects: every path that creates a run stores one (runs-repo defaults both to {}).
    metadata: (run.metadata ?? {}) as Record<string, unknown>,
    input: (run.input ?? {}) as Record<string, unknown>,
    runtime_note: run.runtime_note ?? null,
  };
}

export function toSyncRunView(run: RunRow): SyncRunView {
  return {
    runId: Number(run.id),
    agentId: Number(run.agent_id),
    status: run.status,
    output_data: run.output_data ?? null,
    outputs: Number(run.outputs ?? 0),
    error: errorText(run.error),
    duration_ms: numberOrNull(run.duration_ms),
    started_at: isoOrNull(run.started_at),
    completed_at: isoOrNull(run.completed_at),
    created_at: isoOrNull(run.created_at) ?? new Date(0).toISOString(),
  };
}

/**
 * Spec 4.2 `error: string|null`. Ingest stores a string (kept); a callback stores `{name?, message?, stack?}`
 * (its message, else its name — never the stack, which can carry internals).
 */
export function errorText(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && !Array.isArray(error)) {
    const { message, name } = error as { message?: unknown; name?: unknown };
    if (typeof message === 'string' && message !== '') return message;
    if (typeof name === 'string' && name !== '') return name;
  }
  return null;
}

/** ISO 8601, whichever way the driver handed the timestamp over. */
export function isoOrNull(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
