// Runtimes (admin-api.md "Runtimes"; runtimes.md). `kind` and `org_id` never change: agents and their runs were
// set up against them. The API key and alert secret are sealed and shown only as `_set` flags.
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import type { RuntimeKind } from '../runtimes/runtime-adapter.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { findOrg } from '../orgs/orgs-repo.ts';
import { findRuntime, insertRuntime, updateRuntime, type RuntimeColumns, type RuntimeRow } from '../runtimes/runtimes-repo.ts';
import { reserveId, sealedAt } from '../storage/sealed-columns.ts';
import { checkHttpUrl, fieldsSet } from './validate.ts';

export interface RuntimeView {
  id: number;
  org_id: string;
  name: string;
  kind: RuntimeKind;
  base_url: string;
  api_key_set: boolean;
  alert_secret_set: boolean;
}

export interface CreateRuntimeBody {
  org_id: string;
  name: string;
  kind: RuntimeKind;
  base_url: string;
  api_key?: string | null;
  alert_secret?: string | null;
}

export interface UpdateRuntimeBody {
  name?: string;
  base_url?: string;
  api_key?: string | null; // null clears
  alert_secret?: string | null; // null clears
  org_id?: unknown; // refused: immutable
  kind?: unknown; // refused: immutable
}

export function runtimeView(row: RuntimeRow): RuntimeView {
  return {
    id: Number(row.id),
    org_id: row.org_id,
    name: row.name,
    kind: row.kind,
    base_url: row.base_url,
    api_key_set: row.api_key_enc !== null,
    alert_secret_set: row.alert_secret_enc !== null,
  };
}

/** Null clears the secret. */
function sealed(ctx: AppContext, id: number, column: 'api_key_enc' | 'alert_secret_enc', value: string | null | undefined): string | null {
  return value ? ctx.secrets.seal(value, sealedAt('runtimes', column, id)) : null;
}

export async function createRuntime(ctx: AppContext, body: CreateRuntimeBody, actorUserId: string | null): Promise<RuntimeView> {
  checkHttpUrl('base_url', body.base_url);
  if (!(await findOrg(ctx.db, body.org_id.toLowerCase()))) throw errors.notFound('organization');
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    const id = await reserveId(tx, 'runtimes'); // the secrets are sealed for the row's id
    const rt = await insertRuntime(
      tx,
      id,
      {
        org_id: body.org_id.toLowerCase(),
        name: body.name,
        kind: body.kind,
        base_url: body.base_url,
        api_key_enc: sealed(ctx, id, 'api_key_enc', body.api_key),
        alert_secret_enc: sealed(ctx, id, 'alert_secret_enc', body.alert_secret),
      },
      now,
    );
    await appendAudit(tx, { action: 'runtime.created', actorUserId, details: { runtime_id: Number(rt.id), kind: rt.kind } }, now);
    return rt;
  });
  return runtimeView(row);
}

export async function getRuntime(ctx: AppContext, id: number): Promise<RuntimeView> {
  const row = await findRuntime(ctx.db, id);
  if (!row) throw errors.notFound('runtime');
  return runtimeView(row);
}

/** Null when there is no such runtime. */
export async function updateRuntimeSettings(
  ctx: AppContext,
  id: number,
  body: UpdateRuntimeBody,
  actorUserId: string | null,
): Promise<RuntimeView | null> {
  if (body.kind !== undefined) throw errors.invalid('body.kind', 'cannot be changed');
  if (body.org_id !== undefined) throw errors.invalid('body.org_id', 'cannot be changed');
  if (body.base_url !== undefined) checkHttpUrl('base_url', body.base_url);
  if (fieldsSet(body).length === 0) return getRuntime(ctx, id); // nothing to change, nothing to audit
  const patch: Partial<RuntimeColumns> = { name: body.name, base_url: body.base_url };
  if (body.api_key !== undefined) patch.api_key_enc = sealed(ctx, id, 'api_key_enc', body.api_key);
  if (body.alert_secret !== undefined) patch.alert_secret_enc = sealed(ctx, id, 'alert_secret_enc', body.alert_secret);
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    const rt = await updateRuntime(tx, id, patch, now);
    if (rt) await appendAudit(tx, { action: 'runtime.updated', actorUserId, details: { runtime_id: id, fields: fieldsSet(body) } }, now);
    return rt;
  });
  if (!row) return null;
  await ctx.agents.runtimeChanged(id); // adapters use a cached, decrypted copy on every instance
  return runtimeView(row);
}
