// spec 4.6 (answer at once) and 4.7 (answer with the agent's output). The context's hook has matched the token,
// set req.agent and counted the per-agent rate limit (spec 8.1: 60/min and 10/min).
//
// Methods: POST (the spec's), plus PUT and PATCH, which some senders use for deliveries; `webhook.method` tells
// the task which one arrived. GET, HEAD and DELETE are not routed (404): link unfurlers, crawlers and uptime
// checkers issue them, and each would otherwise start a run.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteHandlerMethod } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { callerGoneSignal } from '../../http/caller-gone.ts';
import { startWebhookRun, webhookAndWait, type InboundWebhook } from '../../webhooks/webhook-run.ts';
import { errorText } from '../../runs/run-view.ts';
import { shapeWebhookResponse } from '../../webhooks/webhook-response.ts';
import type { SyncOutcome } from '../../sync/sync-wait.ts';
import { sendStarted } from '../../http/start-answers.ts';
import { overLimit } from '../../http/rate-limit.ts';
import { rawAnswer, ref, TriggerAccepted, WebhookTimedOut } from '../../schemas/responses.ts';

/** spec 4.6 / 8.4: 1 MiB accepted, one byte more is 413. */
export const WEBHOOK_BODY_LIMIT = 1_048_576;

const METHODS = ['POST', 'PUT', 'PATCH'];

const Params = Type.Object({
  agentId: Type.String(),
  webhookToken: Type.String({ description: 'The agent’s secret webhook token: the only credential, so the whole URL is secret.' }),
});

/** Spec 4.6: any body (JSON, form, binary, empty), up to 1 MiB, kept as raw bytes for the task. */
const RAW_BODY = 'Any body up to 1 MiB, in any content type; the task receives it verbatim (`webhook.rawBody`) and parsed when it is JSON.';

/** Spec 4.7: the agent's output, or what its `webhookResponse` makes of it: any status from 200 to 499. */
const AGENT_ANSWER = rawAnswer(
  'The agent’s output as JSON, or as its `webhookResponse` shapes it: a status from 200 to 499, its headers, a text or ' +
    'JSON body. Always with `content-security-policy: sandbox` and `x-content-type-options: nosniff`.',
  '*/*',
  {},
);

export default async function webhookRoutes(app: FastifyInstance): Promise<void> {
  // Any of these methods, the 1 MiB limit, and the agent's bucket counted by the run's insert.
  const webhookRoute = (url: string, bucket: string, limit: number, schema: FastifySchema, handler: RouteHandlerMethod): void => {
    const documented = { params: Params, ...schema, description: `${schema.description ?? ''} Body: ${RAW_BODY}`.trim() };
    app.route({ method: METHODS, url, bodyLimit: WEBHOOK_BODY_LIMIT, schema: documented, config: { rateLimit: { bucket, limit, inWrite: true } }, handler });
  };

  const webhookSchema: FastifySchema = {
    operationId: 'webhookTrigger',
    summary: 'Start a run from a webhook sender and answer at once',
    description: 'Spec 4.6. The Authorization header is never read: it reaches the task, which must verify the sender.',
    response: { 202: ref(TriggerAccepted) },
    errors: ['not_eligible', 'agent_unavailable', 'rate_limited', 'runtime_failed'],
  };
  webhookRoute('/webhook/:webhookToken', 'webhook', LIMITS.webhook, webhookSchema, async (req, reply) => {
    // Spec part 7: 500 on a failed invocation, so a retrying sender redelivers.
    return sendStarted(reply, await startWebhookRun(app.ctx, req.agent!, inbound(req)), 202);
  });

  const webhookAndWaitSchema: FastifySchema = {
    operationId: 'webhookAndWait',
    summary: 'Start a run from a webhook sender and answer with the agent’s output',
    description: 'Spec 4.7. Any status from 200 to 499 may be the agent’s own (`webhookResponse`), besides the errors listed.',
    response: { 200: AGENT_ANSWER, '2xx': AGENT_ANSWER, '4xx': AGENT_ANSWER, 202: ref(WebhookTimedOut) },
    errors: ['not_eligible', 'agent_unavailable', 'rate_limited', 'run_failed', 'runtime_timeout'],
  };
  webhookRoute('/webhook-and-wait/:webhookToken', 'webhook-and-wait', LIMITS.webhookAndWait, webhookAndWaitSchema, async (req, reply) => {
    const outcome = await webhookAndWait(app.ctx, req.agent!, inbound(req), callerGoneSignal(reply));
    return sendOutcome(reply, outcome);
  });
}

function inbound(req: FastifyRequest): InboundWebhook {
  return {
    method: req.method,
    rawUrl: req.raw.url ?? req.url,
    headers: req.raw.rawHeaders, // every header as sent, repeats included
    rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    token: (req.params as { webhookToken: string }).webhookToken,
    guard: req.rateGuard,
  };
}

function sendOutcome(reply: FastifyReply, outcome: SyncOutcome): FastifyReply {
  switch (outcome.kind) {
    case 'finished': {
      const { run } = outcome;
      if (run.status !== 'completed') {
        const why = errorText(run.error) ?? `the run was ${run.status}`;
        throw errors.runFailed(Number(run.id), run.status === 'cancelled' ? `the run was cancelled: ${why}` : `the run failed: ${why}`);
      }
      const shaped = shapeWebhookResponse(run.output_data ?? null);
      return reply.code(shaped.status).headers(shaped.headers).type(shaped.contentType).send(shaped.body);
    }
    case 'timed_out':
      // 2xx on purpose (spec 4.7): a retrying sender must not start a second run.
      return reply.code(202).send({ runId: Number(outcome.run.id), status: 'running' as const, timedOut: true as const });
    case 'no_answer':
      throw errors.runtimeTimeout(Number(outcome.run.id));
    case 'not_started':
      // 4.7 lists no 500: the run exists and is failed, which is its 502 "the run failed".
      throw errors.runFailed(Number(outcome.run.id), `the run failed: ${outcome.reason}`);
    case 'caller_gone':
      return reply.code(202).send({ runId: outcome.runId, status: 'running' as const, timedOut: true as const });
    case 'over_limit':
      throw overLimit(outcome);
  }
}
