// Credential resolution (spec 4.10) and its zone sibling (zones.md `GET …/credentials/{key}`): one core turns an
// active connection into the answer union, refreshing OAuth tokens first; every resolution is audited as
// `credentials.resolved` with which run (or user) resolved which connection — never the secret.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import {
  connectionSecretAt,
  findActiveConnectionByIntegration,
  findActiveConnectionOfAgent,
  type ApiKeySecret,
  type BasicAuthSecret,
  type ConnectionRow,
} from '../agents/connections-repo.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { ApiError, errors } from '../errors.ts';
import { checkCredentialsToken } from '../agents/agent-tokens.ts';
import { currentOAuthToken } from './oauth-refresh.ts';

export type Extras = Record<string, unknown>;

/** Spec 4.10's answer, discriminated by `type`. */
export type ResolvedCredential =
  | { type: 'api_key'; value: string; extras: Extras }
  | { type: 'basic_auth'; username: string; password: string; extras: Extras }
  | { type: 'oauth'; access_token: string; extras: Extras };

/** The answer for one active connection. Throws 502 upstream_failed when an OAuth refresh is refused. */
export async function resolveConnection(ctx: AppContext, conn: ConnectionRow): Promise<ResolvedCredential> {
  const adminExtras = plainObject(conn.extras);
  switch (conn.type) {
    case 'api_key': {
      const s = ctx.secrets.openJson<ApiKeySecret>(conn.secret_enc, connectionSecretAt(conn.id));
      return { type: 'api_key', value: s.value, extras: { ...adminExtras } };
    }
    case 'basic_auth': {
      const s = ctx.secrets.openJson<BasicAuthSecret>(conn.secret_enc, connectionSecretAt(conn.id));
      return { type: 'basic_auth', username: s.username, password: s.password, extras: { ...adminExtras } };
    }
    case 'oauth': {
      const { secret, expiresAt } = await currentOAuthToken(ctx, conn);
      const provider: Extras = {};
      if (secret.token_type) provider.token_type = secret.token_type;
      if (expiresAt) provider.expires_at = new Date(expiresAt).toISOString();
      if (secret.scope) provider.scope = secret.scope;
      // Spec 4.10: admin metadata wins on a collision.
      return { type: 'oauth', access_token: secret.access_token, extras: { ...provider, ...adminExtras } };
    }
    default:
      throw new ApiError('internal', 'connection has an unknown type');
  }
}

export interface ResolveForRunArgs {
  agent: AgentRow;
  connectionId: string;
  /** The X-Credentials-Token header as received. */
  credentialsToken: string | null;
}

/** Spec 4.10: 401/403 for the token, 404 for a connection the agent cannot see, 502 for a refused refresh. */
export async function resolveForRun(ctx: AppContext, args: ResolveForRunArgs): Promise<ResolvedCredential> {
  const { agent } = args;
  const token = await checkCredentialsToken(ctx, agent, args.credentialsToken);
  if (!token.ok) throw token.status === 403 ? new ApiError('forbidden', token.reason) : errors.unauthorized(token.reason);
  const conn = await findActiveConnectionOfAgent(ctx.db, agent.id, args.connectionId);
  if (!conn) throw errors.notFound('connection');
  const resolved = await resolveConnection(ctx, conn);
  await audit(ctx, conn, { agentId: agent.id, runId: token.runId });
  return resolved;
}

export interface ResolveForZoneArgs {
  agent: AgentRow;
  integrationId: string;
  userId: string;
}

/** zones.md: the agent's active connection for integration `key`; 404 if none. */
export async function resolveForZone(ctx: AppContext, args: ResolveForZoneArgs): Promise<ResolvedCredential> {
  const conn = await findActiveConnectionByIntegration(ctx.db, args.agent.id, args.integrationId);
  if (!conn) throw errors.notFound('connection');
  const resolved = await resolveConnection(ctx, conn);
  await audit(ctx, conn, { agentId: args.agent.id, actorUserId: args.userId, via: 'zone' });
  return resolved;
}

async function audit(
  ctx: AppContext,
  conn: ConnectionRow,
  who: { agentId: number; runId?: number; actorUserId?: string; via?: 'zone' },
): Promise<void> {
  const details: Extras = { connection_id: conn.id, integration_id: conn.integration_id };
  if (who.via) details.via = who.via;
  await appendAudit(
    ctx.db,
    { action: 'credentials.resolved', agentId: who.agentId, runId: who.runId ?? null, actorUserId: who.actorUserId ?? null, details },
    ctx.clock.now(),
  );
}

function plainObject(v: unknown): Extras {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Extras) : {};
}
