// Key rotation and the webhook token reveal (admin-api.md "Agents"; spec 2.1, 5). A rotated value replaces the
// old one in one UPDATE and the agent cache is dropped on every instance, so the old value stops working at once.
import type { AppContext } from '../context.ts';
import { ApiError, errors } from '../errors.ts';
import type { KeyKind } from '../lib/secrets.ts';
import { findAgent, updateAgentColumns } from '../agents/agents-repo.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { rotatedSecret } from '../agents/agent-secrets.ts';
import { sealedAt } from '../storage/sealed-columns.ts';

export const KEY_KINDS: readonly KeyKind[] = ['ingest', 'agent', 'webhook', 'zone'];

/** Rotating `webhook` on an agent that has no token yet creates one. Null: no such agent (nothing written). */
export async function rotateAgentKey(
  ctx: AppContext,
  agentId: number,
  kind: KeyKind,
  actorUserId: string | null,
): Promise<{ kind: KeyKind; value: string } | null> {
  const { value, columns } = rotatedSecret(ctx.secrets, agentId, kind);
  const now = ctx.clock.now();
  const found = await ctx.db.transaction(async (tx) => {
    const updated = await updateAgentColumns(tx, agentId, columns, now);
    if (updated) await appendAudit(tx, { action: 'agent.key_rotated', actorUserId, agentId, details: { kind } }, now);
    return updated !== null;
  });
  if (!found) return null;
  await ctx.agents.changed(agentId);
  ctx.log.info({ agentId, kind }, 'agent key rotated');
  return { kind, value };
}

/** 404 when the agent has no webhook token (it is created by the first enabling of allow_webhook_triggers). */
export async function revealWebhookToken(ctx: AppContext, agentId: number, actorUserId: string | null): Promise<{ webhook_token: string }> {
  const agent = await findAgent(ctx.db, agentId);
  if (!agent) throw errors.notFound('agent');
  if (agent.webhook_token_enc === null) throw new ApiError('not_found', 'the agent has no webhook token; enabling allow_webhook_triggers creates one');
  const token = ctx.secrets.open(agent.webhook_token_enc, sealedAt('agents', 'webhook_token_enc', agent.id));
  await appendAudit(ctx.db, { action: 'agent.webhook_token_revealed', actorUserId, agentId }, ctx.clock.now());
  return { webhook_token: token };
}
