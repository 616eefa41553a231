// Connections: third-party credentials an agent may resolve (admin-api.md "Connections"; spec 4.10). The type's
// secret fields are sealed together as JSON; answers never carry them, only `<field>_set` flags. One active
// connection per integration and agent (the connectionIds map is keyed by integration_id): a second is 409.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { findAgent } from '../agents/agents-repo.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import {
  ACTIVE_CONNECTION_INDEX,
  connectionSecretAt,
  deleteConnection,
  findActiveConnectionByIntegration,
  findConnection,
  insertConnectionOnce,
  listAgentConnections,
  lockConnection,
  updateConnection,
  type ConnectionPatchColumns,
  type ConnectionRow,
  type ConnectionSecretFields,
  type ConnectionType,
} from '../agents/connections-repo.ts';
import { isoOrNull } from '../runs/run-view.ts';
import { checkFetchableUrl, fieldsSet, isUniqueViolation } from './validate.ts';
import { isUuid } from '../lib/uuid.ts';
import { parseExpiresAt } from './expires-at.ts';

/** Every type-specific field, as the flat request body carries them. */
export interface ConnectionFields {
  value?: string;
  username?: string;
  password?: string;
  access_token?: string;
  refresh_token?: string | null;
  expires_at?: unknown; // ISO 8601 string, epoch seconds, or null (PATCH: clears)
  token_url?: string | null;
  client_id?: string | null;
  client_secret?: string | null;
  scope?: string | null;
}

export interface CreateConnectionBody extends ConnectionFields {
  integration_id: string;
  type: ConnectionType;
  extras?: Record<string, unknown>;
  active?: boolean;
}

export interface UpdateConnectionBody extends ConnectionFields {
  active?: boolean;
  extras?: Record<string, unknown>;
  integration_id?: unknown; // refused: immutable
  type?: unknown; // refused: immutable
}

const FIELDS: Record<ConnectionType, { required: readonly string[]; optional: readonly string[] }> = {
  api_key: { required: ['value'], optional: [] },
  basic_auth: { required: ['username', 'password'], optional: [] },
  oauth: { required: ['access_token'], optional: ['refresh_token', 'expires_at', 'token_url', 'client_id', 'client_secret', 'scope'] },
};
const ALL_TYPE_FIELDS = ['value', 'username', 'password', 'access_token', 'refresh_token', 'expires_at', 'token_url', 'client_id', 'client_secret', 'scope'];
const SECRET_FIELDS = new Set(['value', 'password', 'access_token', 'refresh_token', 'client_secret']);

export interface ConnectionView {
  id: string;
  agent_id: number;
  integration_id: string;
  type: ConnectionType;
  active: boolean;
  extras: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  [field: string]: unknown; // type-specific: plain non-secret fields and `<secret>_set` flags
}

export function connectionView(row: ConnectionRow, secrets: AppContext['secrets']): ConnectionView {
  const view: ConnectionView = {
    id: row.id,
    agent_id: Number(row.agent_id),
    integration_id: row.integration_id,
    type: row.type,
    active: row.active,
    extras: row.extras ?? {},
    created_at: isoOrNull(row.created_at)!,
    updated_at: isoOrNull(row.updated_at)!,
  };
  const stored = secrets.openJson<Record<string, unknown>>(row.secret_enc, connectionSecretAt(row.id));
  const { required, optional } = FIELDS[row.type];
  for (const field of [...required, ...optional]) {
    if (field === 'expires_at') view.expires_at = isoOrNull(row.token_expires_at);
    else if (SECRET_FIELDS.has(field)) view[`${field}_set`] = typeof stored[field] === 'string';
    else view[field] = stored[field] ?? null;
  }
  return view;
}

export async function createConnection(
  ctx: AppContext,
  agentId: number,
  body: CreateConnectionBody,
  actorUserId: string | null,
): Promise<{ id: string; integration_id: string; type: ConnectionType; active: boolean }> {
  checkTypeFields(body.type, body, true);
  if (typeof body.token_url === 'string') await checkFetchableUrl(ctx.outbound, 'token_url', body.token_url);
  const secret = secretFieldsOf(body.type, body, {});
  const tokenExpiresAt = body.expires_at === undefined || body.expires_at === null ? null : parseExpiresAt(body.expires_at);
  if (!(await findAgent(ctx.db, agentId))) throw errors.notFound('agent');
  const now = ctx.clock.now();
  const id = randomUUID();
  const row = await ctx.db.transaction(async (tx) => {
    const c = await insertConnectionOnce(
      tx,
      {
        id,
        agentId,
        integrationId: body.integration_id,
        type: body.type,
        secretEnc: ctx.secrets.sealJson(secret, connectionSecretAt(id)),
        extras: body.extras ?? {},
        active: body.active ?? true,
        tokenExpiresAt,
      },
      now,
    );
    if (c) {
      const details = { connection_id: c.id, integration_id: c.integration_id, type: c.type, active: c.active };
      await appendAudit(tx, { action: 'connection.created', actorUserId, agentId, details }, now);
    }
    return c;
  });
  if (!row) throw activeConflict();
  await ctx.agents.changed(agentId); // the task payload's connectionIds map is cached per agent
  return { id: row.id, integration_id: row.integration_id, type: row.type, active: row.active };
}

export async function listConnections(ctx: AppContext, agentId: number): Promise<{ data: ConnectionView[] }> {
  if (!(await findAgent(ctx.db, agentId))) throw errors.notFound('agent');
  const rows = await listAgentConnections(ctx.db, agentId);
  return { data: rows.map((r) => connectionView(r, ctx.secrets)) };
}

export async function getConnection(ctx: AppContext, id: string): Promise<ConnectionView> {
  const row = isUuid(id) ? await findConnection(ctx.db, id) : null;
  if (!row) throw errors.notFound('connection');
  return connectionView(row, ctx.secrets);
}

/** Secret fields given replace the stored ones; `extras` replaces the stored object as a whole. */
export async function updateConnectionSettings(ctx: AppContext, id: string, body: UpdateConnectionBody, actorUserId: string | null): Promise<ConnectionView> {
  if (body.integration_id !== undefined) throw errors.invalid('body.integration_id', 'cannot be changed');
  if (body.type !== undefined) throw errors.invalid('body.type', 'cannot be changed');
  if (!isUuid(id)) throw errors.notFound('connection');
  if (typeof body.token_url === 'string') await checkFetchableUrl(ctx.outbound, 'token_url', body.token_url);
  const now = ctx.clock.now();
  try {
    const row = await ctx.db.transaction(async (tx) => {
      const current = await lockConnection(tx, id);
      if (!current) throw errors.notFound('connection');
      checkTypeFields(current.type, body, false);
      const patch: ConnectionPatchColumns = { active: body.active, extras: body.extras };
      const typeFields = fieldsSet(pick(body, ALL_TYPE_FIELDS));
      if (typeFields.some((f) => f !== 'expires_at')) {
        const at = connectionSecretAt(id);
        patch.secret_enc = ctx.secrets.sealJson(secretFieldsOf(current.type, body, ctx.secrets.openJson(current.secret_enc, at)), at);
      }
      if (body.expires_at !== undefined) patch.token_expires_at = body.expires_at === null ? null : parseExpiresAt(body.expires_at);
      // A new access token without an expiry makes the stored expiry meaningless.
      else if (body.access_token !== undefined) patch.token_expires_at = null;
      // `current` is inactive, so an active connection for its integration is another one.
      if (body.active === true && !current.active && (await findActiveConnectionByIntegration(tx, current.agent_id, current.integration_id))) {
        throw activeConflict();
      }
      const updated = (await updateConnection(tx, id, patch, now))!;
      const details = { connection_id: id, integration_id: current.integration_id, fields: fieldsSet(body), active: updated.active };
      await appendAudit(tx, { action: 'connection.updated', actorUserId, agentId: Number(current.agent_id), details }, now);
      return updated;
    });
    await ctx.agents.changed(Number(row.agent_id));
    return connectionView(row, ctx.secrets);
  } catch (err) {
    // A concurrent activation won the race the sibling check could not see.
    if (isUniqueViolation(err, ACTIVE_CONNECTION_INDEX)) throw activeConflict();
    throw err;
  }
}

/** False when there is no such connection. */
export async function removeConnection(ctx: AppContext, id: string, actorUserId: string | null): Promise<boolean> {
  if (!isUuid(id)) return false;
  const now = ctx.clock.now();
  const removed = await ctx.db.transaction(async (tx) => {
    const row = await deleteConnection(tx, id);
    if (row) {
      const details = { connection_id: row.id, integration_id: row.integration_id, type: row.type };
      await appendAudit(tx, { action: 'connection.deleted', actorUserId, agentId: Number(row.agent_id), details }, now);
    }
    return row;
  });
  if (!removed) return false;
  await ctx.agents.changed(Number(removed.agent_id));
  return true;
}

/** Fields of another type are refused by name; on create the type's required fields must be present. */
function checkTypeFields(type: ConnectionType, body: ConnectionFields, creating: boolean): void {
  const { required, optional } = FIELDS[type];
  for (const field of ALL_TYPE_FIELDS) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (!required.includes(field) && !optional.includes(field)) throw errors.invalid(`body.${field}`, `is not a field of ${type} connections`);
    if (value === null && required.includes(field)) throw errors.invalid(`body.${field}`, 'cannot be null');
  }
  if (creating) for (const field of required) if ((body as Record<string, unknown>)[field] === undefined) throw errors.invalid(`body.${field}`, `is required for ${type} connections`);
}

/** The sealed JSON: stored fields overlaid with the body's; null removes an optional field. */
function secretFieldsOf(type: ConnectionType, body: ConnectionFields, stored: Record<string, unknown>): ConnectionSecretFields {
  const out: Record<string, unknown> = {};
  const { required, optional } = FIELDS[type];
  for (const field of [...required, ...optional]) {
    if (field === 'expires_at') continue; // kept in token_expires_at, not secret
    const given = (body as Record<string, unknown>)[field];
    const value = given === undefined ? stored[field] : given;
    if (value !== undefined && value !== null) out[field] = value;
  }
  return out as ConnectionSecretFields;
}

function pick(o: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if ((o as Record<string, unknown>)[k] !== undefined) out[k] = (o as Record<string, unknown>)[k];
  return out;
}

function activeConflict() {
  return errors.conflict('the agent already has an active connection for this integration_id');
}
