// Runtime failure alerts (spec part 1 "a failure alert webhook from the runtime", decisions.md "Events"): the
// third path to a terminal state. Authenticated by the runtime's alert secret, deduplicated on the alert id,
// correlated to a run through the runtime's run id, and written through the guarded transition.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { findRuntime } from '../runtimes/runtimes-repo.ts';
import { findRunsByRuntimeExternalId, type RunRow } from './runs-repo.ts';
import { transition } from './run-transitions.ts';
import { recordAlertReceipt } from './alert-receipts-repo.ts';
import { belongsTo } from './run-ownership.ts';
import type { RemoteOwner } from '../runtimes/runtime-adapter.ts';

import { constantTimeEqual } from '../lib/secrets.ts';
import { sealedAt } from '../storage/sealed-columns.ts';
import { parseJson } from '../runtimes/http.ts';
import { findUnstorable } from '../lib/storable-json.ts';
import { triggerErrorText } from '../runtimes/trigger-dev-mapping.ts';

export interface InboundAlert {
  runtimeId: number | null;
  rawBody: Buffer;
  /** x-trigger-signature-hmacsha256 (Trigger.dev). */
  signature: string | null;
  /** The bearer token (n8n error workflow). */
  bearer: string | null;
}

export type AlertOutcome =
  | { kind: 'unauthorized' }
  | { kind: 'invalid'; message: string }
  | { kind: 'duplicate' }
  | { kind: 'ignored'; reason: string }
  | { kind: 'unknown_run'; externalRunId: string }
  /** The runtime did not answer whose run it is: nothing applied or remembered, so a resend is handled anew. */
  | { kind: 'unverified'; message: string }
  | { kind: 'applied' | 'already_terminal'; runId: number };

/** What an alert says, whichever runtime sent it. */
interface ParsedAlert {
  alertId: string;
  externalRunId: string;
  to: 'failed' | 'cancelled';
  error: string;
  /** The task the alert names (Trigger.dev); null when the alert does not say (n8n names no webhook path). */
  owner: RemoteOwner | null;
}

const MAX_ERROR_CHARS = 500;

export async function receiveRuntimeAlert(ctx: AppContext, alert: InboundAlert): Promise<AlertOutcome> {
  if (alert.runtimeId === null) return { kind: 'unauthorized' };
  const runtime = await findRuntime(ctx.db, alert.runtimeId);
  // An unknown runtime and a runtime without an alert secret look the same as a bad signature.
  if (!runtime?.alert_secret_enc) return { kind: 'unauthorized' };
  const secret = ctx.secrets.open(runtime.alert_secret_enc, sealedAt('runtimes', 'alert_secret_enc', runtime.id));
  const authentic = runtime.kind === 'task' ? signatureMatches(alert.rawBody, secret, alert.signature) : alert.bearer !== null && constantTimeEqual(alert.bearer, secret);
  if (!authentic) return { kind: 'unauthorized' };

  const body = parseJson(alert.rawBody.toString('utf8'));
  if (!body.ok || typeof body.value !== 'object' || body.value === null) return { kind: 'invalid', message: 'alert body is not a JSON object' };
  const parsed = runtime.kind === 'task' ? parseTriggerDevAlert(body.value) : parseN8nAlert(body.value);
  if ('kind' in parsed) return parsed;

  // Issue 12: an alert ends only the runs of agents whose own task or workflow the runtime run ran, never a run
  // registered under another agent's id (run-ownership.ts, the check every poll makes).
  const tracking = await findRunsByRuntimeExternalId(ctx.db, runtime.id, parsed.externalRunId);
  let owner = parsed.owner;
  if (tracking.length > 0 && owner === null) {
    const read = await ownerAtRuntime(ctx, runtime.id, parsed.externalRunId);
    if ('unverified' in read) return { kind: 'unverified', message: read.unverified };
    owner = read.owner;
  }
  const owned = tracking.filter((r) => belongsTo(r.target, owner));

  const now = ctx.clock.now();
  const applied: number[] = [];
  const finished: RunRow[] = []; // committed with the transaction; observed once it is
  const outcome = await ctx.db.transaction(async (tx): Promise<AlertOutcome> => {
    applied.length = 0;
    // The receipt and the transitions commit together: a delivery that fails half-way is not remembered.
    if (!(await recordAlertReceipt(tx, runtime.id, parsed.alertId, now))) return { kind: 'duplicate' };
    if (tracking.length === 0) return { kind: 'unknown_run', externalRunId: parsed.externalRunId };
    if (owned.length === 0) return { kind: 'ignored', reason: 'the runtime run belongs to another task or workflow than the agents that track it' };
    // Usually one run; two agents on one target may both track the same runtime run, and both end with it.
    for (const run of owned) {
      const moved = await transition(tx, run.id, 'terminal', parsed.to, now, { error: parsed.error }, { via: 'alert' });
      if (moved.kind === 'applied') {
        applied.push(run.id);
        finished.push(moved.run);
      }
    }
    return applied.length > 0 ? { kind: 'applied', runId: applied[0]! } : { kind: 'already_terminal', runId: owned[0]!.id };
  });
  for (const runId of outcome.kind === 'applied' ? applied : []) {
    ctx.runWatch.publish(runId, parsed.to);
    ctx.metrics.entered('alert', parsed.to);
  }
  for (const run of outcome.kind === 'applied' ? finished : []) ctx.metrics.finished(run);
  if (outcome.kind === 'unknown_run') ctx.log.warn({ runtimeId: runtime.id, externalRunId: parsed.externalRunId }, 'runtime alert for an unknown run ignored');
  if (outcome.kind === 'ignored' && tracking.length > 0) ctx.log.warn({ runtimeId: runtime.id, runIds: tracking.map((r) => r.id) }, `runtime alert not applied: ${outcome.reason}`);
  return outcome;
}

/**
 * Whose run it is, read at the runtime (n8n: the execution's workflow graph). A runtime that cannot tell (no API
 * key, no such execution) leaves the owner unknown: no run is ended. One that did not answer is `unverified`.
 */
async function ownerAtRuntime(ctx: AppContext, runtimeId: number, externalRunId: string): Promise<{ owner: RemoteOwner | null } | { unverified: string }> {
  const runtime = await ctx.agents.runtime(runtimeId);
  if (!runtime) return { owner: null };
  const res = await ctx.runtimes.get(runtime.kind).fetchStatus(runtime, externalRunId);
  if (res.ok) return { owner: res.value.owner };
  ctx.log.warn({ runtimeId, failure: res.failure.kind }, `runtime alert: whose run it is could not be read: ${res.failure.message}`);
  return res.failure.retryable ? { unverified: `the runtime could not confirm whose run it is: ${res.failure.message}` } : { owner: null };
}

/** Lowercase hex HMAC-SHA256 of the raw body keyed by the alert secret (runtimes.md), compared in constant time. */
function signatureMatches(rawBody: Buffer, secret: string, presented: string | null): boolean {
  if (!presented || !/^[0-9a-f]{64}$/i.test(presented)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(presented, 'hex'));
}

interface TriggerAlertBody {
  id?: unknown;
  type?: unknown;
  /** The run's TaskRunError, tagged by `type` (issue 36 item 6): triggerErrorText reads each kind. */
  object?: { task?: { id?: unknown }; run?: { id?: unknown; status?: unknown; error?: unknown } };
  /** Legacy ("v1") channels: no id, no type, no object; the task, the run and its error at the top. */
  task?: { id?: unknown };
  run?: { id?: unknown };
  error?: unknown;
}

/**
 * `alert.run.failed`, or the legacy channels' shape (runtimes.md). Alerts that are not about a run — deployment
 * alerts, typed (`alert.deployment.*`) or on a legacy channel (`{deployment, …}`: no type, id or run) — are
 * acknowledged and ignored (issue 36 item 7): a 400 would make Trigger.dev send each one three times. A legacy
 * alert has no id of its own; it is sent for a failed run only, so the run id is its dedupe key.
 */
function parseTriggerDevAlert(value: object): ParsedAlert | AlertOutcome {
  const body = value as TriggerAlertBody;
  if (body.type === undefined && body.object === undefined) {
    if (body.run === undefined || body.run === null) return { kind: 'ignored', reason: 'a legacy-channel alert that is not about a run (a deployment alert)' };
    const runId = idOf(body.run.id, 'run.id');
    if (typeof runId !== 'string') return runId;
    const message = triggerErrorText(body.error, MAX_ERROR_CHARS) ?? 'Run failed in the runtime';
    return { alertId: `run:${runId}`, externalRunId: runId, to: 'failed', error: message, owner: taskOwner(body.task?.id) };
  }
  if (body.type !== undefined && body.type !== 'alert.run.failed') return { kind: 'ignored', reason: `alert type ${String(body.type)} is not about a run failure` };
  const run = body.object?.run;
  const alertId = idOf(body.id, 'id');
  if (typeof alertId !== 'string') return alertId;
  const runId = idOf(run?.id, 'object.run.id');
  if (typeof runId !== 'string') return runId;
  const status = typeof run?.status === 'string' ? run.status : 'FAILED';
  // Trigger.dev sends no alert for CANCELED; should one ever come, the run is cancelled, not failed.
  const to = status === 'CANCELED' ? 'cancelled' : 'failed';
  const message = triggerErrorText(run?.error, MAX_ERROR_CHARS) ?? `Run ended with status ${status} in the runtime`;
  return { alertId, externalRunId: runId, to, error: message, owner: taskOwner(body.object?.task?.id) };
}

interface N8nAlertBody {
  execution?: { id?: unknown; error?: { message?: unknown } };
}

/** The error workflow's POST: one per failed execution, so the execution id is the dedupe key. */
function parseN8nAlert(value: object): ParsedAlert | AlertOutcome {
  const ex = (value as N8nAlertBody).execution;
  const id = idOf(ex?.id, 'execution.id', true);
  if (typeof id !== 'string') return id;
  const message = textOf(ex?.error?.message) ?? 'Workflow execution failed in the runtime';
  // `workflow.id` alone does not say which path the workflow serves: the execution is read for that.
  return { alertId: `execution:${id}`, externalRunId: id, to: 'failed', error: message, owner: null };
}

/** The task identifier an alert names (`task.id`), as the owner of its run. */
function taskOwner(id: unknown): RemoteOwner | null {
  return typeof id === 'string' && id !== '' ? { taskIdentifier: id } : null;
}

/**
 * An id the alert names, as the receipt and the run lookup use it: a non-empty string (n8n also sends whole
 * numbers) that can be stored as sent. Anything else is an invalid alert (400) rather than a 500 at INSERT time.
 */
function idOf(value: unknown, field: string, numeric = false): string | { kind: 'invalid'; message: string } {
  if (typeof value === 'number' && numeric) {
    return Number.isSafeInteger(value) ? String(value) : { kind: 'invalid', message: `${field} must be a string or a whole number below 2^53` };
  }
  if (typeof value !== 'string' || value === '') return { kind: 'invalid', message: `${field} is required` };
  const bad = findUnstorable(value, field);
  return bad ? { kind: 'invalid', message: `${bad.path} ${bad.problem}` } : value;
}

function textOf(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.slice(0, MAX_ERROR_CHARS) : null;
}
