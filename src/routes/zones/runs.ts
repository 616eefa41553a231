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

const Input = Type.Optional(Type.Object({}, { additionalProperties: true }));
const StartBody = Type.Object({ input: Input }, { additionalProperties: true });
const SyncBody = Type.Object({ input: Input, timeoutMs: Type.Optional(TimeoutMsSchema) }, { additionalProperties: true });

const runsLimit = { zoneRateLimit: { bucket: 'zone-runs', limit: LIMITS.zoneRuns, per: 'user' as const, inWrite: true } };


export default async function zoneRunRoutes(app: FastifyInstance): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/runs/:runId', { schema: { params: Type.Object({ agentId: Type.String(), runId: Type.String() }) } }, async (req) =>
    zoneRunView(app.ctx, req.agent!, parseId(req.params.runId)),
  );

  r.post('/runs', { schema: { body: StartBody }, config: runsLimit, preValidation: emptyBodyAsObject }, async (req, reply) => {
    const result = await startZoneRun(app.ctx, { agent: req.agent!, userId: req.zoneUserId!, input: req.body.input, guard: req.rateGuard });
    if (isOverLimit(result)) throw overLimit(result);
    if (!result.ok) throw errors.runtimeFailed(result.run.id, result.reason);
    return reply.code(201).send({ runId: result.run.id, status: 'queued' as const });
  });

  r.post('/runs/wait', { schema: { body: SyncBody }, config: runsLimit, preValidation: emptyBodyAsObject }, async (req, reply) => {
    const outcome = await startZoneRunAndWait(app.ctx, syncRequest(req, req.body, reply));
    return sendSyncOutcome(reply, outcome);
  });

  r.post('/runs/download', { schema: { body: SyncBody }, config: runsLimit, preValidation: emptyBodyAsObject }, async (req, reply) => {
    const outcome = await startZoneDownload(app.ctx, syncRequest(req, req.body, reply));
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
  };
}
