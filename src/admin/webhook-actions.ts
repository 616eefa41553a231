// Webhook actions (admin-api.md "Webhook actions"; decisions.md "Events"): where run events are POSTed, signed
// with a per-action Standard Webhooks secret that is shown once, in the answer that creates it.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { generateSigningSecret } from '../events/standard-webhooks.ts';
import { findAgent } from '../agents/agents-repo.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import {
  deleteWebhookAction,
  insertWebhookAction,
  listAgentWebhookActions,
  type WebhookActionRow,
  type WebhookOnState,
} from '../events/webhook-actions-repo.ts';
import { isoOrNull } from '../runs/run-view.ts';
import { checkFetchableUrl } from './validate.ts';
import { isUuid } from '../lib/uuid.ts';
import { sealedAt } from '../storage/sealed-columns.ts';

export interface WebhookActionView {
  id: string;
  agent_id: number;
  on_state: WebhookOnState;
  url: string;
  signing_secret_set: boolean;
  created_at: string;
}

export function webhookActionView(row: WebhookActionRow): WebhookActionView {
  return {
    id: row.id,
    agent_id: Number(row.agent_id),
    on_state: row.on_state,
    url: row.url,
    signing_secret_set: true,
    created_at: isoOrNull(row.created_at)!,
  };
}

/**
 * The URL is checked by the SSRF guard now (a clear 400) and again at every delivery against the resolved address,
 * because DNS can change after this call.
 */
export async function createWebhookAction(
  ctx: AppContext,
  agentId: number,
  body: { on_state: WebhookOnState; url: string },
  actorUserId: string | null,
): Promise<{ id: string; on_state: WebhookOnState; url: string; signing_secret: string }> {
  await checkFetchableUrl(ctx.outbound, 'url', body.url);
  if (!(await findAgent(ctx.db, agentId))) throw errors.notFound('agent');
  const signingSecret = generateSigningSecret();
  const now = ctx.clock.now();
  const id = randomUUID();
  const signingSecretEnc = ctx.secrets.seal(signingSecret, sealedAt('webhook_actions', 'signing_secret_enc', id));
  const row = await ctx.db.transaction(async (tx) => {
    const action = await insertWebhookAction(tx, { id, agentId, onState: body.on_state, url: body.url, signingSecretEnc }, now);
    // The URL stays out of the audit log: some receivers put their own secret in it.
    await appendAudit(tx, { action: 'webhook_action.created', actorUserId, agentId, details: { webhook_action_id: action.id, on_state: action.on_state } }, now);
    return action;
  });
  return { id: row.id, on_state: row.on_state, url: row.url, signing_secret: signingSecret };
}

export async function listWebhookActions(ctx: AppContext, agentId: number): Promise<{ data: WebhookActionView[] }> {
  if (!(await findAgent(ctx.db, agentId))) throw errors.notFound('agent');
  return { data: (await listAgentWebhookActions(ctx.db, agentId)).map(webhookActionView) };
}

/** False when there is no such webhook action. */
export async function removeWebhookAction(ctx: AppContext, id: string, actorUserId: string | null): Promise<boolean> {
  if (!isUuid(id)) return false;
  const now = ctx.clock.now();
  const removed = await ctx.db.transaction(async (tx) => {
    const row = await deleteWebhookAction(tx, id);
    if (row) {
      const details = { webhook_action_id: row.id, on_state: row.on_state };
      await appendAudit(tx, { action: 'webhook_action.deleted', actorUserId, agentId: Number(row.agent_id), details }, now);
    }
    return row;
  });
  return removed !== null;
}
