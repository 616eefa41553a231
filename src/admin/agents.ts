// Agents (admin-api.md "Agents"; spec 2.1). Secrets are shown in full only by the call that creates them; every
// other answer shows `<name>_set`. Every write is followed by ctx.agents.changed(id) so cached copies on every
// instance are dropped at once (a paused agent stops triggering, a toggled-off agent stops accepting).
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import {
  findAgent,
  insertAgent,
  lockAgent,
  updateAgentColumns,
  type AgentRow,
  type AgentSettableColumns,
  type AgentWritableColumns,
} from '../agents/agents-repo.ts';
import { appendAudit, type AuditEntry } from '../orgs/audit-repo.ts';
import type { Queryable } from '../storage/db.ts';
import { findOrg } from '../orgs/orgs-repo.ts';
import { findRuntime } from '../runtimes/runtimes-repo.ts';
import { newAgentSecrets, rotatedSecret } from '../agents/agent-secrets.ts';
import { reserveId } from '../storage/sealed-columns.ts';
import { isoOrNull } from '../runs/run-view.ts';
import { checkFetchableUrl, fieldsSet } from './validate.ts';
import { AGENT_DEFAULTS } from './agent-defaults.ts';

export interface AgentView extends AgentSettableColumns {
  id: number;
  org_id: string;
  ingest_api_key_set: boolean;
  agent_api_key_set: boolean;
  zone_jwt_secret_set: boolean;
  webhook_token_set: boolean;
  created_at: string;
  updated_at: string;
}

export type CreateAgentBody = Partial<AgentSettableColumns> & Pick<AgentSettableColumns, 'name' | 'managed_by'> & { org_id: string };
export type UpdateAgentBody = Partial<AgentSettableColumns> & { org_id?: unknown };

/** admin-api.md defaults (agent-defaults.ts, shared with the console's form). */
const DEFAULTS = AGENT_DEFAULTS satisfies Partial<AgentSettableColumns>;

const TOGGLES = ['allow_external_triggers', 'allow_webhook_triggers'] as const;

export function agentView(row: AgentRow): AgentView {
  return {
    id: Number(row.id),
    org_id: row.org_id,
    name: row.name,
    managed_by: row.managed_by,
    status: row.status,
    runtime_id: row.runtime_id === null ? null : Number(row.runtime_id),
    target: row.target,
    allow_external_triggers: row.allow_external_triggers,
    allow_webhook_triggers: row.allow_webhook_triggers,
    output_kind: row.output_kind,
    running_timeout_ms: Number(row.running_timeout_ms),
    poll_interval_s: Number(row.poll_interval_s),
    default_input: row.default_input ?? {},
    zone_app_url: row.zone_app_url,
    ingest_api_key_set: row.ingest_key_digest !== null,
    agent_api_key_set: row.agent_key_digest !== null,
    zone_jwt_secret_set: row.zone_secret_enc !== null,
    webhook_token_set: row.webhook_token_digest !== null,
    created_at: isoOrNull(row.created_at)!,
    updated_at: isoOrNull(row.updated_at)!,
  };
}

export interface CreatedAgent extends AgentView {
  ingest_api_key: string;
  agent_api_key: string;
  zone_jwt_secret: string;
  webhook_token?: string;
}

export async function createAgent(ctx: AppContext, body: CreateAgentBody, actorUserId: string | null): Promise<CreatedAgent> {
  const orgId = body.org_id.toLowerCase();
  if (!(await findOrg(ctx.db, orgId))) throw errors.notFound('organization');
  const { org_id: _orgId, ...given } = withoutUndefined(body);
  const settings: AgentSettableColumns = { ...DEFAULTS, default_input: {}, ...given, name: body.name, managed_by: body.managed_by };
  if (settings.zone_app_url !== null) await checkFetchableUrl(ctx.outbound, 'zone_app_url', settings.zone_app_url);
  await checkSettings(ctx.db, orgId, settings);
  const now = ctx.clock.now();
  const { row, secrets } = await ctx.db.transaction(async (tx) => {
    const id = await reserveId(tx, 'agents'); // the secrets are sealed for the row's id
    const secrets = newAgentSecrets(ctx.secrets, id, settings.allow_webhook_triggers);
    const agent = await insertAgent(tx, id, orgId, { ...settings, ...secrets.columns }, now);
    await appendAudit(tx, { action: 'agent.created', actorUserId, agentId: Number(agent.id), details: { managed_by: agent.managed_by } }, now);
    return { row: agent, secrets };
  });
  await ctx.agents.changed(Number(row.id));
  const { ingest_api_key, agent_api_key, zone_jwt_secret, webhook_token } = secrets.plain;
  return { ...agentView(row), ingest_api_key, agent_api_key, zone_jwt_secret, ...(webhook_token ? { webhook_token } : {}) };
}

export async function getAgent(ctx: AppContext, id: number): Promise<AgentView> {
  const row = await findAgent(ctx.db, id);
  if (!row) throw errors.notFound('agent');
  return agentView(row);
}

/**
 * PATCH: writes the fields given, checks the result as a whole (a platform agent keeps a runtime of its own
 * organization and a target), and audits toggles and status changes. Spec 2.1: the first enabling of
 * allow_webhook_triggers creates the webhook token, returned in this answer only.
 */
export async function updateAgent(
  ctx: AppContext,
  id: number,
  body: UpdateAgentBody,
  actorUserId: string | null,
): Promise<AgentView & { webhook_token?: string }> {
  if (body.org_id !== undefined) throw errors.invalid('body.org_id', 'cannot be changed');
  const patch: Partial<AgentSettableColumns> = withoutUndefined(body);
  delete (patch as { org_id?: unknown }).org_id;
  if (Object.keys(patch).length === 0) return getAgent(ctx, id); // nothing to change, nothing to audit
  if (typeof patch.zone_app_url === 'string') await checkFetchableUrl(ctx.outbound, 'zone_app_url', patch.zone_app_url);
  const now = ctx.clock.now();
  const result = await ctx.db.transaction(async (tx) => {
    const current = await lockAgent(tx, id);
    if (!current) throw errors.notFound('agent');
    const merged: AgentSettableColumns = { ...settingsOf(current), ...patch };
    await checkSettings(tx, current.org_id, merged, patch.runtime_id !== undefined);

    const columns: Partial<AgentWritableColumns> = { ...patch };
    let webhookToken: string | null = null;
    if (patch.allow_webhook_triggers === true && current.webhook_token_digest === null) {
      const created = rotatedSecret(ctx.secrets, id, 'webhook');
      webhookToken = created.value;
      Object.assign(columns, created.columns);
    }
    const updated = (await updateAgentColumns(tx, id, columns, now))!;
    for (const entry of auditEntries(current, updated, fieldsSet(patch), webhookToken !== null, actorUserId)) await appendAudit(tx, entry, now);
    return { updated, webhookToken };
  });
  await ctx.agents.changed(id);
  return { ...agentView(result.updated), ...(result.webhookToken ? { webhook_token: result.webhookToken } : {}) };
}

/** The rules the schema cannot express (admin-api.md "Agents"). */
async function checkSettings(q: Queryable, orgId: string, s: AgentSettableColumns, runtimeChanged = true): Promise<void> {
  if (s.runtime_id !== null && runtimeChanged) {
    const runtime = await findRuntime(q, s.runtime_id);
    if (!runtime) throw errors.notFound('runtime');
    if (runtime.org_id !== orgId) throw errors.invalid('body.runtime_id', "must name a runtime of the agent's organization");
  }
  if (s.managed_by === 'platform') {
    if (s.runtime_id === null) throw errors.invalid('body.runtime_id', 'is required for a platform agent');
    if (s.target === null) throw errors.invalid('body.target', 'is required for a platform agent');
  }
}

function auditEntries(before: AgentRow, after: AgentRow, fields: string[], webhookTokenCreated: boolean, actorUserId: string | null): AuditEntry[] {
  const agentId = Number(after.id);
  const entries: AuditEntry[] = [{ action: 'agent.updated', actorUserId, agentId, details: { fields } }];
  for (const field of TOGGLES) {
    if (before[field] !== after[field]) entries.push({ action: 'agent.toggle_changed', actorUserId, agentId, details: { field, value: after[field] } });
  }
  if (before.status !== after.status) {
    entries.push({ action: 'agent.status_changed', actorUserId, agentId, details: { field: 'status', value: after.status, previous: before.status } });
  }
  if (webhookTokenCreated) entries.push({ action: 'agent.webhook_token_created', actorUserId, agentId });
  return entries;
}

function settingsOf(row: AgentRow): AgentSettableColumns {
  const v = agentView(row);
  return {
    name: v.name,
    managed_by: v.managed_by,
    status: v.status,
    runtime_id: v.runtime_id,
    target: v.target,
    allow_external_triggers: v.allow_external_triggers,
    allow_webhook_triggers: v.allow_webhook_triggers,
    output_kind: v.output_kind,
    running_timeout_ms: v.running_timeout_ms,
    poll_interval_s: v.poll_interval_s,
    default_input: v.default_input,
    zone_app_url: v.zone_app_url,
  };
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
