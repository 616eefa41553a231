// Idempotency-Key at the HTTP edge (issue 13; decisions.md "Idempotency keys"): reading the header, answering a
// request whose key an earlier request holds (a replay, or 422), and keeping the claiming request's first answer.
// The claim itself is made by the run's insert (runs/idempotency.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { requestFingerprint, storeAnswer, storedAnswer, type IdempotencyRequest, type KeyRecord, type KeyTaken } from '../runs/idempotency.ts';
import type { RunHead } from '../runs/runs-repo.ts';
import { joinRunWait } from '../sync/join-wait.ts';
import { waitWindowMs } from '../sync/wait-window.ts';
import { sendSyncOutcome } from './sync-outcome.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's Idempotency-Key (idempotencyOf); `replayed` once it is answered as a replay. */
    idempotency: { agentId: number; request: IdempotencyRequest; replayed: boolean } | null;
  }
}

/**
 * The header as the routes that take it declare it (`schema.headers`: validation and the OpenAPI document from one
 * source; a malformed key is 400 invalid_header naming it). An opaque token of 1-255 visible ASCII characters, no
 * spaces: a UUID is typical. A repeated header arrives joined by ", " and is refused.
 */
export const IdempotencyKeyHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, pattern: '^[!-~]+$', description: 'A retry with the same key and body starts no second run; its first answer is replayed (24 h by default).' }),
    ),
  },
  { additionalProperties: true },
);

/** On every answer a replay gets (the name Stripe uses): this request started nothing. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * The request's Idempotency-Key (null without one; its route's schema has checked it), with the fingerprint of its
 * route and of `fields`, the body fields that change what it does (a field sent as null counts as absent).
 */
export function idempotencyOf(req: FastifyRequest, fields: Record<string, unknown>): IdempotencyRequest | null {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string') return null;
  const endpoint = req.routeOptions.url ?? req.url;
  const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
  const request = { key, endpoint, fingerprint: requestFingerprint(endpoint, present) };
  req.idempotency = { agentId: req.agent!.id, request, replayed: false };
  return request;
}

/** The answers that are the run's own and so are replayed: the 2xx, and the run's failures of spec part 7. */
const RUN_ANSWER_CODES: ReadonlySet<string> = new Set(['runtime_failed', 'run_failed', 'runtime_timeout']);

/**
 * For the contexts whose routes take the key: stores the answer of the request that claimed its key, before it is
 * sent, so that a retry that follows it gets the same. Not stored (a retry is answered from the run instead): a
 * streamed file, an answer whose caller had already left, and any other refusal or failure — a 429 started nothing,
 * a 503 or a surprise's 500 says nothing final about the run (which may exist and be fine).
 */
export function rememberIdempotentAnswers(app: FastifyInstance): void {
  app.decorateRequest('idempotency', null);
  app.addHook('onSend', (req, reply, payload, done) => {
    const call = req.idempotency;
    if (!call || call.replayed || !isRunAnswer(reply, payload)) return done(null, payload);
    storeAnswer(app.ctx, call.agentId, call.request, reply.statusCode, payload).then(
      () => done(null, payload),
      (err: unknown) => {
        req.log.warn({ err }, 'the answer to an Idempotency-Key was not stored; a retry is answered from its run');
        done(null, payload);
      },
    );
  });
}

function isRunAnswer(reply: FastifyReply, payload: unknown): payload is string {
  if (typeof payload !== 'string' || reply.raw.destroyed) return false;
  const status = reply.statusCode;
  if (status >= 200 && status < 300) return status !== 204;
  try {
    return RUN_ANSWER_CODES.has(String((JSON.parse(payload) as { code?: unknown } | null)?.code));
  } catch {
    return false;
  }
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

/** /trigger, zone /runs: the first answer, or spec 4.1's 201 for its run. */
export function replayTrigger(reply: FastifyReply, taken: KeyTaken): Promise<FastifyReply> {
  return replay(reply, taken, (run) => reply.code(201).send({ runId: run.id, status: 'queued' as const }));
}

/** /trigger-and-wait, zone /runs/wait: the first answer, or a wait of this caller's window on the same run. */
export function replayWait(ctx: AppContext, reply: FastifyReply, taken: KeyTaken, opts: { timeoutMs?: number; signal?: AbortSignal }): Promise<FastifyReply> {
  return replay(reply, taken, async (run) => {
    const agent = reply.request.agent!;
    const windowMs = waitWindowMs({ timeoutMs: opts.timeoutMs, runningTimeoutMs: agent.running_timeout_ms });
    const outcome = await joinRunWait(ctx, agent, run, windowMs, opts.signal);
    // The first request may have answered meanwhile: then both callers hear the same. A failed read is no answer.
    const first = await storedAnswer(ctx, agent.id, reply.request.idempotency!.request.key).catch(() => null);
    return first ? sendStored(reply, first) : sendSyncOutcome(reply, outcome);
  });
}

/** /trigger-and-download, zone /runs/download: the first answer if it was a JSON one (a failure); a file goes once. */
export function replayDownload(reply: FastifyReply, taken: KeyTaken): Promise<FastifyReply> {
  return replay(reply, taken, (run) => {
    throw new ApiError(
      'download_not_replayable',
      `the file of run ${run.id} went, or is going, to the request that first sent this Idempotency-Key; a file is streamed once: use a new key for a new run`,
      { runId: run.id },
    );
  });
}
