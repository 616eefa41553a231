// admin-api.md "Runs and audit": cancel a run, and read its logs from the runtime on demand.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { cancelRun, fetchRunLogs } from '../../runs/run-control.ts';
import { toAdminRunView } from '../../runs/run-view.ts';
import { numericId } from './params.ts';

const RunParams = Type.Object({ runId: Type.String() });

export default async function runControlRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/runs/:runId/cancel', { schema: { params: RunParams } }, async (req) => {
    const runId = numericId(req.params.runId, 'run');
    const result = await cancelRun(app.ctx, runId, { via: 'admin' });
    if (result.kind === 'not_found') throw errors.notFound('run');
    if (result.kind === 'already_terminal') throw new ApiError('conflict', `run ${runId} is already ${result.run.status}`, { runId });
    return toAdminRunView(result.run);
  });

  app.get('/runs/:runId/logs', { schema: { params: RunParams } }, async (req) => {
    const runId = numericId(req.params.runId, 'run');
    const result = await fetchRunLogs(app.ctx, runId);
    if (result.kind === 'not_found') throw errors.notFound('run');
    if (result.kind === 'upstream_failed') throw new ApiError('upstream_failed', result.message, { runId });
    return { logs: result.logs };
  });
}
