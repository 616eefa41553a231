// Runs started by third-party webhooks (spec 4.6, 4.7). The URL is the credential; the run's input is the
// inbound request only (no merge with the agent's default input), and the stored snapshot is redacted.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import { errors } from '../errors.ts';
import { secretMatches } from '../lib/secrets.ts';
import { buildWebhookObject, redactForStorage, REDACTED, type BuildWebhookInput } from './webhook-request.ts';
import { startRun, type StartRunResult } from '../runs/start-run.ts';
import { assertEligible } from '../runs/begin-run.ts';
import { startAndAwait, type SyncOutcome } from '../sync/sync-wait.ts';
import { webhookWaitWindowMs } from '../sync/wait-window.ts';

// Compared against when the agent does not exist, so an unknown agent costs the same digest comparison as a
// wrong token (spec part 7: the two cases are deliberately indistinguishable).
const NO_DIGEST = new Uint8Array(32).fill(0xa5);

/** spec 4.6 auth: the agent whose webhook token this is, or null (unknown agent and wrong token alike). */
export function webhookAgentMatches(agent: AgentRow | null, token: string): agent is AgentRow {
  const matches = secretMatches(token, agent?.webhook_token_digest ?? NO_DIGEST);
  return agent !== null && agent.webhook_token_digest !== null && matches;
}

export interface InboundWebhook extends Omit<BuildWebhookInput, 'receivedAt'> {
  /** The path token, scrubbed from the stored snapshot wherever a proxy header echoed the URL. */
  token: string;
  /** This request's rate-limit count, made by the run's insert. */
  guard?: RateGuard | null;
}

/** spec 4.6: 202 {runId, status:'queued'}; a failed invocation is `not_started` (500 upstream). */
export async function startWebhookRun(ctx: AppContext, agent: AgentRow, inbound: InboundWebhook): Promise<StartRunResult | OverLimit> {
  assertEligible(agent, 'webhook');
  return startRun(ctx, { agent, ...webhookInputs(ctx, inbound), createdBy: null, source: 'webhook', guard: inbound.guard });
}

/** spec 4.7: as 4.6, then held for min(running timeout, 5 min) (spec 8.3). */
export async function webhookAndWait(ctx: AppContext, agent: AgentRow, inbound: InboundWebhook, signal?: AbortSignal): Promise<SyncOutcome> {
  assertEligible(agent, 'webhook_and_wait');
  // 4.7 eligibility: only a runtime that answers a held call can produce the response body.
  const runtime = agent.runtime_id === null ? null : await ctx.agents.runtime(agent.runtime_id);
  if (runtime && !ctx.runtimes.get(runtime.kind).supportsSyncInvoke) {
    throw errors.agentUnavailable('the agent\'s runtime does not support synchronous triggering');
  }
  const windowMs = webhookWaitWindowMs(agent.running_timeout_ms);
  return startAndAwait(ctx, { agent, ...webhookInputs(ctx, inbound), createdBy: null, source: 'webhook_and_wait', guard: inbound.guard }, { windowMs, signal });
}

/** Task input `{webhook}` (verbatim headers, raw body) and the stored snapshot (masked, no raw body, no token). */
function webhookInputs(ctx: AppContext, inbound: InboundWebhook): { input: unknown; storedInput: unknown } {
  const { token, guard: _guard, ...request } = inbound;
  const webhook = buildWebhookObject({ ...request, receivedAt: ctx.clock.now() });
  return { input: { webhook }, storedInput: { webhook: scrubSecret(redactForStorage(webhook), token) } };
}

/**
 * Replaces `secret` inside every string (values and keys) of a JSON-like value. A reverse proxy may echo the
 * request URL, token included, in headers such as x-original-uri; the stored run must never hold the token.
 */
export function scrubSecret<T>(value: T, secret: string): T {
  if (secret === '' || !JSON.stringify(value).includes(JSON.stringify(secret).slice(1, -1))) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.split(secret).join(REDACTED);
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, child] of Object.entries(v)) {
      Object.defineProperty(out, k.split(secret).join(REDACTED), { value: walk(child), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  return walk(value) as T;
}
