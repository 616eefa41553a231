// The answers of the run-starting endpoints, one mapper per kind of answer (issue 38 item 1): a run started and
// answered at once (spec 4.1, 4.6, zones `runs`, the console), a run waited for (4.2, zones `runs/wait`), a file
// streamed (4.3, zones `runs/download`). Each also answers a request whose Idempotency-Key an earlier request holds
// (a replay, or 422), and marks the answers that are the run's own, which the edge keeps for later replays
// (idempotency-key.ts).
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import { isOverLimit, type OverLimit } from '../rate-limits/rate-guard.ts';
import type { StartRunResult } from '../runs/start-run.ts';
import type { RunHead } from '../runs/runs-repo.ts';
import { isKeyTaken, storedAnswer, type KeyRecord, type KeyTaken } from '../runs/idempotency.ts';
import type { SyncOutcome } from '../sync/sync-wait.ts';
import type { DownloadOutcome } from '../sync/download-run.ts';
import { joinRunWait } from '../sync/join-wait.ts';
import { waitWindowMs } from '../sync/wait-window.ts';
import { toSyncRunView } from '../runs/run-view.ts';
import { ApiError, errors } from '../errors.ts';
import { overLimit } from './rate-limit.ts';
import { REPLAYED_HEADER } from './idempotency-key.ts';

/** Spec 4.1's 201 (4.6's 202 for a webhook): the run is queued; a runtime that refused it is 500 naming the run. */
export function sendStarted(reply: FastifyReply, result: StartRunResult | OverLimit | KeyTaken, code: 201 | 202 = 201): FastifyReply | Promise<FastifyReply> {
  if (isKeyTaken(result)) return replay(reply, result, (run) => reply.code(201).send(accepted(run)));
  if (isOverLimit(result)) throw overLimit(result);
  runAnswer(reply);
  if (!result.ok) throw errors.runtimeFailed(result.run.id, result.reason);
  return reply.code(code).send(accepted(result.run));
}

/** What a replay of a wait is answered from while the first request has not answered: this caller's own window. */
export interface WaitReplay {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Spec 4.2's answers (also the zone `runs/wait`): 200 terminal run, 202 timed out, 504 no answer, 500 not started. */
export function sendSyncOutcome(ctx: AppContext, reply: FastifyReply, outcome: SyncOutcome | KeyTaken, replayWith: WaitReplay = {}): FastifyReply | Promise<FastifyReply> {
  if (isKeyTaken(outcome)) return replay(reply, outcome, (run) => replayWait(ctx, reply, run, replayWith));
  switch (outcome.kind) {
    case 'finished':
      runAnswer(reply);
      return reply.code(200).send(toSyncRunView(outcome.run));
    case 'timed_out': {
      runAnswer(reply);
      const { id, agent_id, status } = outcome.run;
      return reply.code(202).send({ runId: Number(id), agentId: Number(agent_id), status, timedOut: true as const });
    }
    case 'no_answer':
      runAnswer(reply);
      throw errors.runtimeTimeout(outcome.run.id);
    case 'not_started':
      runAnswer(reply);
      throw errors.runtimeFailed(outcome.run.id, outcome.reason);
    case 'caller_gone':
      // Nobody is left to read this (204, as the downloads answer); the run goes on as if triggered asynchronously.
      return reply.code(204).send();
    case 'over_limit':
      throw overLimit(outcome);
  }
}

/** Spec 4.3's answers (also the zone `runs/download`): the file, or the run's failure (500, 502, 504). */
export function sendDownload(reply: FastifyReply, outcome: DownloadOutcome | KeyTaken): FastifyReply | Promise<FastifyReply> {
  if (isKeyTaken(outcome)) return replay(reply, outcome, notReplayable);
  switch (outcome.kind) {
    case 'over_limit':
      throw overLimit(outcome);
    case 'failed':
      runAnswer(reply);
      throw new ApiError(outcome.code, outcome.message, { runId: Number(outcome.run.id) });
    case 'caller_gone':
      return reply.code(204).send(); // nobody is left to read it
    case 'stream':
      void outcome.track(reply.raw);
      // Piped with backpressure; Content-Length passes through when the runtime sent one, else chunked. A file
      // is streamed once and never stored, so it is not marked as an answer to keep.
      return reply.code(200).headers(outcome.headers).send(outcome.body);
  }
}

const accepted = (run: RunHead): { runId: number; status: 'queued' } => ({ runId: Number(run.id), status: 'queued' });

/** This answer is the run's own (its 2xx, or its failure of spec part 7): a retry with the same key gets it too. */
function runAnswer(reply: FastifyReply): void {
  const call = reply.request.idempotency;
  if (call) call.runAnswer = true;
}

/**
 * A request whose key an earlier request holds. Asking something else under it is 422, nothing written. A replay
 * gets the first answer, byte for byte; while there is none (the first is still at work, or its answer reached
 * nobody), `fromRun` answers from the run.
 */
async function replay(reply: FastifyReply, taken: KeyTaken, fromRun: (run: RunHead) => FastifyReply | Promise<FastifyReply>): Promise<FastifyReply> {
  if (!taken.sameRequest) {
    throw new ApiError('idempotency_key_reused', 'this Idempotency-Key was already used for another request (another endpoint or body); use a new key');
  }
  reply.request.idempotency!.replayed = true;
  reply.header(REPLAYED_HEADER, 'true');
  return taken.record.answer ? sendStored(reply, taken.record.answer) : fromRun(taken.record.run);
}

function sendStored(reply: FastifyReply, answer: NonNullable<KeyRecord['answer']>): FastifyReply {
  // A string with a JSON type is sent as it is: the very bytes of the first answer.
  return reply.code(answer.statusCode).type('application/json; charset=utf-8').send(answer.body);
}

/** A wait replayed before the first answer: a wait of this caller's window on the same run. */
async function replayWait(ctx: AppContext, reply: FastifyReply, run: RunHead, opts: WaitReplay): Promise<FastifyReply> {
  const agent = reply.request.agent!;
  const windowMs = waitWindowMs({ timeoutMs: opts.timeoutMs, runningTimeoutMs: agent.running_timeout_ms });
  const outcome = await joinRunWait(ctx, agent, run, windowMs, opts.signal);
  // The first request may have answered meanwhile: then both callers hear the same. A failed read is no answer.
  const first = await storedAnswer(ctx, agent.id, reply.request.idempotency!.request.key).catch(() => null);
  return first ? sendStored(reply, first) : sendSyncOutcome(ctx, reply, outcome);
}

/** A file goes once: a replay gets the first answer only if it was a JSON one (a failure). */
function notReplayable(run: RunHead): never {
  throw new ApiError(
    'download_not_replayable',
    `the file of run ${run.id} went, or is going, to the request that first sent this Idempotency-Key; a file is streamed once: use a new key for a new run`,
    { runId: run.id },
  );
}
