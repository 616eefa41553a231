import type { FastifyReply } from 'fastify';
import type { SyncOutcome } from '../sync/sync-wait.ts';
import { toSyncRunView } from '../runs/run-view.ts';
import { errors } from '../errors.ts';
import { overLimit } from './rate-limit.ts';

/** Spec 4.2's answers (also the zone `runs/wait`): 200 terminal run, 202 timed out, 504 no answer, 500 not started. */
export function sendSyncOutcome(reply: FastifyReply, outcome: SyncOutcome): FastifyReply {
  switch (outcome.kind) {
    case 'finished':
      return reply.code(200).send(toSyncRunView(outcome.run));
    case 'timed_out': {
      const { id, agent_id, status } = outcome.run;
      return reply.code(202).send({ runId: Number(id), agentId: Number(agent_id), status, timedOut: true as const });
    }
    case 'no_answer':
      throw errors.runtimeTimeout(outcome.run.id);
    case 'not_started':
      throw errors.runtimeFailed(outcome.run.id, outcome.reason);
    case 'caller_gone':
      // Nobody is left to read this (204, as the downloads answer); the run goes on as if triggered asynchronously.
      return reply.code(204).send();
    case 'over_limit':
      throw overLimit(outcome);
  }
}
