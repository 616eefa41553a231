// Zone run endpoints (zones.md): read a run of the agent, and start runs as 4.1 / 4.2 / 4.3 for the token's user.
// Starting counts 30/min per user across agents (spec 8.1), all three sharing one bucket.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { parseId } from '../../http/bearer.ts';
import { callerGoneSignal } from '../../http/caller-gone.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { TimeoutMsSchema } from '../../sync/wait-window.ts';
import { zoneRunView } from '../../zones/zone-runs.ts';
import { triggerRun } from '../../runs/begin-run.ts';
import { triggerAndWait, type WaitRequest } from '../../sync/trigger-and-wait.ts';
import { triggerAndDownload } from '../../sync/download-run.ts';
import { emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { IdempotencyKeyHeaders, idempotencyOf } from '../../http/idempotency-key.ts';
import { sendDownload, sendStarted, sendSyncOutcome } from '../../http/start-answers.ts';
import { CALLER_GONE, DOWNLOAD, ref, SyncCompleted, SyncTimedOut, TriggerAccepted, ZoneRun } from '../../schemas/responses.ts';

const Input = Type.Optional(Type.Object({}, { additionalProperties: true }));
const StartBody = Type.Object({ input: Input }, { additionalProperties: true });
const SyncBody = Type.Object({ input: Input, timeoutMs: Type.Optional(TimeoutMsSchema) }, { additionalProperties: true });

const runsLimit = { rateLimit: { bucket: 'zone-runs', limit: LIMITS.zoneRuns, per: 'user' as const, inWrite: true } };


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
    return sendStarted(reply, await triggerRun(app.ctx, 'zone', { agent: req.agent!, userId: req.zoneUserId, input: req.body.input, guard: req.rateGuard, idempotency }));
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
    return sendSyncOutcome(app.ctx, reply, await triggerAndWait(app.ctx, 'zone_wait', zoneReq), { timeoutMs: zoneReq.timeoutMs, signal: zoneReq.callerGone });
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
    return sendDownload(reply, await triggerAndDownload(app.ctx, 'zone_download', syncRequest(req, req.body, reply)));
  });
}

/** A zone sync call as the services take it: the token's user, the body, and the caller's hang-up signal. */
function syncRequest(req: FastifyRequest, body: Static<typeof SyncBody>, reply: FastifyReply): WaitRequest {
  return {
    agent: req.agent!,
    userId: req.zoneUserId,
    input: body.input,
    timeoutMs: body.timeoutMs,
    callerGone: callerGoneSignal(reply),
    guard: req.rateGuard,
    idempotency: idempotencyOf(req, { input: body.input, timeoutMs: body.timeoutMs, user: req.zoneUserId }),
  };
}
