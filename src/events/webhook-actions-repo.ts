// Webhook actions (decisions.md "Events"): per agent and on_state; the signing secret is sealed.
import type { Queryable } from '../storage/db.ts';

export type WebhookOnState = 'completed' | 'failed' | 'cancelled' | 'waiting';

export interface WebhookActionRow {
  id: string;
  agent_id: number;
  on_state: WebhookOnState;
  url: string;
  signing_secret_enc: string;
  created_at: Date;
}

export async function insertWebhookAction(
  q: Queryable,
  a: { id: string; agentId: number; onState: WebhookOnState; url: string; signingSecretEnc: string },
  now: Date,
): Promise<WebhookActionRow> {
  const { rows } = await q.query<WebhookActionRow>(
    `INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [a.id, a.agentId, a.onState, a.url, a.signingSecretEnc, now],
  );
  return rows[0]!;
}

export async function listAgentWebhookActions(q: Queryable, agentId: number): Promise<WebhookActionRow[]> {
  const { rows } = await q.query<WebhookActionRow>('SELECT * FROM webhook_actions WHERE agent_id = $1 ORDER BY created_at, id', [agentId]);
  return rows;
}

export async function findWebhookAction(q: Queryable, id: string): Promise<WebhookActionRow | null> {
  const { rows } = await q.query<WebhookActionRow>('SELECT * FROM webhook_actions WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/** Pending outbox deliveries of the action go with it (ON DELETE CASCADE). */
export async function deleteWebhookAction(q: Queryable, id: string): Promise<WebhookActionRow | null> {
  const { rows } = await q.query<WebhookActionRow>('DELETE FROM webhook_actions WHERE id = $1 RETURNING *', [id]);
  return rows[0] ?? null;
}
