// A runtime row with its secrets opened, as the adapters need it. Secrets stay sealed everywhere else; callers get
// runtimes through the per-instance cache, ctx.agents.runtime(id) (agent-directory.ts).
import type { SecretBox } from '../lib/secrets.ts';
import { sealedAt } from '../storage/sealed-columns.ts';
import type { RuntimeRow } from './runtimes-repo.ts';
import type { RuntimeConnection } from './runtime-adapter.ts';

export function toRuntimeConnection(secrets: SecretBox, row: RuntimeRow): RuntimeConnection {
  return {
    id: row.id,
    kind: row.kind,
    baseUrl: row.base_url,
    apiKey: row.api_key_enc ? secrets.open(row.api_key_enc, sealedAt('runtimes', 'api_key_enc', row.id)) : null,
  };
}
