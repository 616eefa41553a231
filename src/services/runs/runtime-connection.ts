// A runtime row with its secrets opened, as the adapters need it. Secrets stay sealed everywhere else.
import type { AppContext } from '../../context.ts';
import type { RuntimeRow } from '../../storage/runtimes-repo.ts';
import type { RuntimeConnection } from '../../runtimes/runtime-adapter.ts';


export function toRuntimeConnection(ctx: Pick<AppContext, 'secrets'>, row: RuntimeRow): RuntimeConnection {
  return {
    id: row.id,
    kind: row.kind,
    baseUrl: row.base_url,
    apiKey: row.api_key_enc ? ctx.secrets.open(row.api_key_enc) : null,
  };
}

/** Through the per-instance cache (agent-directory.ts), evicted on every instance when the runtime changes. */
export function loadRuntimeConnection(ctx: Pick<AppContext, 'agents'>, runtimeId: number): Promise<RuntimeConnection | null> {
  return ctx.agents.runtime(runtimeId);
}
