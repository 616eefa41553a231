// admin-api.md "Runs and audit": cancel a run, and read its logs from the runtime on demand.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { cancelRun, fetchRunLogs } from '../../runs/run-control.ts';
import { toAdminRunView } from '../../runs/run-view.ts';
import { numericId } from './params.ts';
import { RunLogs } from './views.ts';
import { AdminRun, ref } from '../../schemas/responses.ts';

const RunParams = Type.Object({ runId: Type.String() });

export default async function runControlRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCancelRun = {
    operationId: 'adminCancelRun',
    summary: 'Cancel a run, at its runtime too where it can be',
    params: RunParams,
    response: { 200: ref(AdminRun) },
    errors: ['not_found', 'conflict'] as const,
  };
  app.post('/runs/:runId/cancel', { schema: adminCancelRun }, async (req) => {
    const runId = numericId(req.params.runId, 'run');
    const result = await cancelRun(app.ctx, runId, { via: 'admin', actorUserId: req.principal!.userId });
    if (result.kind === 'not_found') throw errors.notFound('run');
    if (result.kind === 'already_terminal') throw new ApiError('conflict', `run ${runId} is already ${result.run.status}`, { runId });
    return toAdminRunView(result.run);
  });

  const adminGetRunLogs = {
    operationId: 'adminGetRunLogs',
    summary: 'Fetch the run’s log from its runtime',
    params: RunParams,
    response: { 200: ref(RunLogs) },
    errors: ['not_found', 'upstream_failed', 'conflict'] as const,
  };
  app.get('/runs/:runId/logs', { schema: adminGetRunLogs }, async (req) => {
    const runId = numericId(req.params.runId, 'run');
    const result = await fetchRunLogs(app.ctx, runId);
    if (result.kind === 'not_found') throw errors.notFound('run');
    if (result.kind === 'upstream_failed') throw new ApiError('upstream_failed', result.message, { runId });
    if (result.kind === 'not_owned') throw new ApiError('conflict', result.message, { runId });
    return { logs: result.logs };
  });
}
