// Checks of the two per-agent JWTs: the credentials token (spec 4.10, part 5) and the zone token (zones.md).
// A token that fails with the expected agent's secret may be a valid token of ANOTHER agent: the contract wants
// 403 for that, 401 for everything else. The unverified agent_id (peekAgentId) only picks whose secret to try;
// nothing else is read from a token before a signature checks out.
import type { AppContext } from '../context.ts';
import type { AgentRow } from './agents-repo.ts';
import { mintCredentialsToken, peekAgentId, verifyCredentialsToken, verifyZoneToken } from '../lib/jwt.ts';
import { sealedAt } from '../storage/sealed-columns.ts';

export type TokenCheck<T> = ({ ok: true } & T) | { ok: false; status: 401 | 403; reason: string };

export function credentialsSecretOf(ctx: AppContext, agent: AgentRow): Buffer {
  return Buffer.from(ctx.secrets.open(agent.credentials_secret_enc, sealedAt('agents', 'credentials_secret_enc', agent.id)), 'utf8');
}

/** Spec 5 / 8.5: the credentials token lives 60 minutes, minted once per run (at trigger or register). */
export const CREDENTIALS_TTL_SECONDS = 3600;

export function mintRunCredentials(ctx: AppContext, agent: AgentRow, runId: number, now: Date): Promise<{ token: string; expiresInSeconds: number }> {
  return mintCredentialsToken({ secret: credentialsSecretOf(ctx, agent), agentId: agent.id, runId, now, ttlSeconds: CREDENTIALS_TTL_SECONDS });
}

/**
 * Spec part 5: the run's one credentials token, issued when the run was created (trigger or first register; both
 * mint with the run's `created_at`). HS256 is deterministic, so the same claims under the same secret are the same
 * token: a repeated /register gets the very token of the first answer, not a fresher one, with the seconds it has
 * left. Null once it has expired. (After a rotation of the agent's credentials secret the bytes differ; the expiry
 * is still the first one.)
 */
export async function runCredentialsToken(
  ctx: AppContext,
  agent: AgentRow,
  run: { id: number; created_at: Date },
  now: Date,
): Promise<{ token: string; expiresInSeconds: number } | null> {
  const ageSeconds = Math.floor(now.getTime() / 1000) - Math.floor(run.created_at.getTime() / 1000);
  const left = CREDENTIALS_TTL_SECONDS - Math.max(0, ageSeconds);
  if (left <= 0) return null;
  const { token } = await mintRunCredentials(ctx, agent, run.id, run.created_at);
  return { token, expiresInSeconds: left };
}

export function zoneSecretOf(ctx: AppContext, agent: AgentRow): Buffer {
  return Buffer.from(ctx.secrets.open(agent.zone_secret_enc, sealedAt('agents', 'zone_secret_enc', agent.id)), 'utf8');
}

/** Spec 4.10: any unexpired credentials token issued for this agent; its run id is what the audit records. */
export async function checkCredentialsToken(ctx: AppContext, agent: AgentRow, token: string | null): Promise<TokenCheck<{ runId: number }>> {
  if (!token) return { ok: false, status: 401, reason: 'missing X-Credentials-Token' };
  const now = ctx.clock.now();
  const own = await verifyCredentialsToken(token, credentialsSecretOf(ctx, agent), now);
  if (own.ok) {
    return own.agentId === agent.id ? { ok: true, runId: own.runId } : { ok: false, status: 403, reason: 'credentials token is bound to another agent' };
  }
  if (own.reason === 'expired') return { ok: false, status: 401, reason: 'credentials token expired' };
  const other = await otherAgent(ctx, token, agent.id);
  if (other && (await verifyCredentialsToken(token, credentialsSecretOf(ctx, other), now)).ok) {
    return { ok: false, status: 403, reason: 'credentials token is bound to another agent' };
  }
  return { ok: false, status: 401, reason: 'invalid credentials token' };
}

/**
 * zones.md: a zone JWT signed with the path agent's zone secret whose agent_id is that agent. `agent` is null
 * for an unknown path agent (then only the 401/403 distinction remains).
 */
export async function checkZoneToken(
  ctx: AppContext,
  agentId: number | null,
  agent: AgentRow | null,
  token: string | null,
): Promise<TokenCheck<{ userId: string; orgId: string }>> {
  if (!token) return { ok: false, status: 401, reason: 'missing zone token' };
  const now = ctx.clock.now();
  if (agent) {
    const own = await verifyZoneToken(token, zoneSecretOf(ctx, agent), now);
    if (own.ok) {
      return own.agentId === agent.id
        ? { ok: true, userId: own.userId, orgId: own.orgId }
        : { ok: false, status: 403, reason: 'zone token belongs to another agent' };
    }
    if (own.reason === 'expired') return { ok: false, status: 401, reason: 'zone token expired' };
  }
  const other = await otherAgent(ctx, token, agentId);
  if (other && (await verifyZoneToken(token, zoneSecretOf(ctx, other), now)).ok) {
    return { ok: false, status: 403, reason: 'zone token belongs to another agent' };
  }
  return { ok: false, status: 401, reason: 'invalid zone token' };
}

async function otherAgent(ctx: AppContext, token: string, expectedAgentId: number | null): Promise<AgentRow | null> {
  const claimed = peekAgentId(token);
  if (claimed === null || claimed === expectedAgentId) return null;
  return ctx.agents.get(claimed);
}
