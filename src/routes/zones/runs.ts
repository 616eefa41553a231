// Zone run endpoints (zones.md): read a run of the agent, and start runs as 4.1 / 4.2 / 4.3 for the token's user.
// Starting counts 30/min per user across agents (spec 8.1), all three sharing one bucket.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendSyncOutcome } from '../../http/sync-outcome.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { callerGoneSignal } from '../../http/caller-gone.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { TimeoutMsSchema } from '../../sync/wait-window.ts';
import { startZoneDownload, startZoneRun, startZoneRunAndWait, zoneRunView, type ZoneSyncRequest } from '../../zones/zone-runs.ts';
import { isOverLimit } from '../../rate-limits/rate-guard.ts';
import { overLimit } from '../../http/rate-limit.ts';
import { emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { IdempotencyKeyHeaders, idempotencyOf, replayDownload, replayTrigger, replayWait } from '../../http/idempotency-key.ts';
import { isKeyTaken } from '../../runs/idempotency.ts';
import { CALLER_GONE, DOWNLOAD, ref, SyncCompleted, SyncTimedOut, TriggerAccepted, ZoneRun } from '../../http/openapi-components.ts';

const Input = Type.Optional(Type.Object({}, { additionalProperties: true }));
const StartBody = Type.Object({ input: Input }, { additionalProperties: true });
const SyncBody = Type.Object({ input: Input, timeoutMs: Type.Optional(TimeoutMsSchema) }, { additionalProperties: true });

const runsLimit = { zoneRateLimit: { bucket: 'zone-runs', limit: LIMITS.zoneRuns, per: 'user' as const, inWrite: true } };


export default async function zoneRunRoutes(app: FastifyInstance): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  const read = {
    operationId: 'zoneGetRun',
    summary: 'Read a run of the agent',
    params: Type.Object({ agentId: Type.String(), runId: Type.String() }),
    response: { 200: ref(ZoneRun) },
    errors: ['not_found'] as const,
  };
  r.get('/runs/:runId', { schema: read }, async (req) =>
    zoneRunView(app.ctx, req.agent!, parseId(req.params.runId)),
  );

  const start = {
    operationId: 'zoneTriggerRun',
    summary: 'Start a run for the token’s user and answer at once (as spec 4.1)',
    body: StartBody,
    headers: IdempotencyKeyHeaders,
    response: { 201: ref(TriggerAccepted) },
    errors: ['rate_limited', 'runtime_failed', 'invalid_header', 'idempotency_key_reused'] as const,
  };
  r.post('/runs', { schema: start, config: runsLimit, preValidation: emptyBodyAsObject }, async (req, reply) => {
    // Keys are scoped by agent; the token's user is part of what is asked, so one user never gets another's answer.
    const idempotency = idempotencyOf(req, { input: req.body.input, user: req.zoneUserId });
    const result = await startZoneRun(app.ctx, { agent: req.agent!, userId: req.zoneUserId!, input: req.body.input, guard: req.rateGuard, idempotency });
    if (isKeyTaken(result)) return replayTrigger(reply, result);
    if (isOverLimit(result)) throw overLimit(result);
    if (!result.ok) throw errors.runtimeFailed(result.run.id, result.reason);
    return reply.code(201).send({ runId: result.run.id, status: 'queued' as const });
  });

  const wait = {
    operationId: 'zoneTriggerAndWait',
    summary: 'Start a run for the token’s user and wait for it (as spec 4.2)',
    body: SyncBody,
    headers: IdempotencyKeyHeaders,
    response: { 200: ref(SyncCompleted), 202: ref(SyncTimedOut), 204: CALLER_GONE },
    errors: ['rate_limited', 'runtime_failed', 'runtime_timeout', 'invalid_header', 'idempotency_key_reused'] as const,
  };
  r.post('/runs/wait', { schema: wait, config: runsLimit, preValidation: emptyBodyAsObject }, async (req, reply) => {
    const zoneReq = syncRequest(req, req.body, reply);
    const outcome = await startZoneRunAndWait(app.ctx, zoneReq);
    if (isKeyTaken(outcome)) return replayWait(app.ctx, reply, outcome, { timeoutMs: zoneReq.timeoutMs, signal: zoneReq.callerGone });
    return sendSyncOutcome(reply, outcome);
  });

  const download = {
    operationId: 'zoneTriggerAndDownload',
    summary: 'Start a run for the token’s user and stream its file (as spec 4.3)',
    body: SyncBody,
    headers: IdempotencyKeyHeaders,
    response: { 200: DOWNLOAD, 204: CALLER_GONE },
    errors: ['rate_limited', 'runtime_failed', 'run_failed', 'runtime_timeout', 'invalid_header', 'idempotency_key_reused', 'download_not_replayable'] as const,
  };
  r.post('/runs/download', { schema: download, config: runsLimit, preValidation: emptyBodyAsObject }, async (req, reply) => {
    const outcome = await startZoneDownload(app.ctx, syncRequest(req, req.body, reply));
    if (isKeyTaken(outcome)) return replayDownload(reply, outcome);
    if (outcome.kind === 'over_limit') throw overLimit(outcome);
    if (outcome.kind === 'failed') throw new ApiError(outcome.code, outcome.message, { runId: Number(outcome.run.id) });
    if (outcome.kind === 'caller_gone') return reply.code(204).send(); // nobody is left to read it
    void outcome.track(reply.raw);
    return reply.code(200).headers(outcome.headers).send(outcome.body);
  });
}

/** A zone sync call as the services take it: the token's user, the body, and the caller's hang-up signal. */
function syncRequest(req: FastifyRequest, body: Static<typeof SyncBody>, reply: FastifyReply): ZoneSyncRequest {
  return {
    agent: req.agent!,
    userId: req.zoneUserId!,
    input: body.input,
    timeoutMs: body.timeoutMs,
    callerGone: callerGoneSignal(reply),
    guard: req.rateGuard,
    idempotency: idempotencyOf(req, { input: body.input, timeoutMs: body.timeoutMs, user: req.zoneUserId }),
  };
}
