// Test helpers for credential resolution: connections inserted straight through SQL with the same sealing the
// admin API uses (secret fields as one sealed JSON), and credentials tokens minted with an agent's own secret.
import { randomUUID } from 'node:crypto';
import { mintCredentialsToken, mintZoneToken } from '../../src/lib/jwt.ts';
import type { AgentRow } from '../../src/agents/agents-repo.ts';
import { connectionSecretAt } from '../../src/agents/connections-repo.ts';
import { credentialsSecretOf, zoneSecretOf } from '../../src/agents/agent-tokens.ts';
import type { TestApp } from '../helpers/test-app.ts';

export interface SeedConnection {
  integrationId?: string;
  type: 'api_key' | 'basic_auth' | 'oauth';
  secret: Record<string, unknown>;
  extras?: Record<string, unknown>;
  active?: boolean;
  expiresAt?: Date | null;
}

export async function seedConnection(t: TestApp, agentId: number, c: SeedConnection): Promise<string> {
  const id = randomUUID();
  await t.db.query(
    `INSERT INTO connections (id, agent_id, integration_id, type, secret_enc, extras, active, token_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)`,
    [id, agentId, c.integrationId ?? `int-${id.slice(0, 8)}`, c.type, t.ctx.secrets.sealJson(c.secret, connectionSecretAt(id)), JSON.stringify(c.extras ?? {}), c.active ?? true, c.expiresAt ?? null],
  );
  await t.ctx.agents.changed(agentId); // as the admin API does: the connection map is cached per agent
  return id;
}

export async function readSecret<T = Record<string, unknown>>(t: TestApp, connectionId: string): Promise<{ secret: T; expiresAt: Date | null }> {
  const { rows } = await t.db.query<{ secret_enc: string; token_expires_at: Date | null }>(
    'SELECT secret_enc, token_expires_at FROM connections WHERE id = $1',
    [connectionId],
  );
  return { secret: t.ctx.secrets.openJson<T>(rows[0]!.secret_enc, connectionSecretAt(connectionId)), expiresAt: rows[0]!.token_expires_at };
}

export function credentialsSecret(t: TestApp, agent: AgentRow): Buffer {
  return credentialsSecretOf(t.ctx, agent);
}

export function zoneSecret(t: TestApp, agent: AgentRow): Buffer {
  return zoneSecretOf(t.ctx, agent);
}

export async function credentialsToken(t: TestApp, agent: AgentRow, runId = 1, now = new Date()): Promise<string> {
  return (await mintCredentialsToken({ secret: credentialsSecret(t, agent), agentId: agent.id, runId, now })).token;
}

export async function zoneToken(t: TestApp, agent: AgentRow, userId: string, now = new Date()): Promise<string> {
  return (await mintZoneToken({ secret: zoneSecret(t, agent), userId, agentId: agent.id, orgId: agent.org_id, now })).token;
}
