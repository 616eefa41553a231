// A runtime row with its secrets opened, as the adapters need it. Secrets stay sealed everywhere else.
import type { AppContext } from '../context.ts';
import type { Queryable } from '../storage/db.ts';
import { findRuntime, type RuntimeRow } from '../storage/runtimes-repo.ts';
import type { RuntimeConnection } from '../runtimes/runtime-adapter.ts';

type Ctx = Pick<AppContext, 'db' | 'secrets'>;

export function toRuntimeConnection(ctx: Pick<AppContext, 'secrets'>, row: RuntimeRow): RuntimeConnection {
  return {
    id: row.id,
    kind: row.kind,
    baseUrl: row.base_url,
    apiKey: row.api_key_enc ? ctx.secrets.open(row.api_key_enc) : null,
  };
}

export async function loadRuntimeConnection(ctx: Ctx, runtimeId: number, q: Queryable = ctx.db): Promise<RuntimeConnection | null> {
  const row = await findRuntime(q, runtimeId);
  return row ? toRuntimeConnection(ctx, row) : null;
}
