// The four agent secrets (spec 2.1) and how each is kept at rest (decisions.md): ingest and agent keys as
// digests (the agent key also sealed, for the runtime's environment), webhook token as digest + sealed (it can be
// revealed), zone and credentials signing secrets sealed, each for its own column of the agent's row.
import { randomBytes } from 'node:crypto';
import { digest, generateSecret, type SecretBox } from '../lib/secrets.ts';
import { sealedAt } from '../storage/sealed-columns.ts';

export interface AgentSecretColumns {
  ingest_key_digest: Buffer;
  agent_key_digest: Buffer;
  agent_key_enc: string;
  zone_secret_enc: string;
  credentials_secret_enc: string;
  webhook_token_digest: Buffer | null;
  webhook_token_enc: string | null;
}

export interface NewAgentSecrets {
  plain: { ingest_api_key: string; agent_api_key: string; zone_jwt_secret: string; webhook_token: string | null };
  columns: AgentSecretColumns;
}

/** `agentId`: the id the row will have (reserveId), which the sealed values are bound to. */
export function newAgentSecrets(box: SecretBox, agentId: number, withWebhookToken: boolean): NewAgentSecrets {
  const ingest = generateSecret('ingest');
  const agent = generateSecret('agent');
  const zone = generateSecret('zone');
  const webhook = withWebhookToken ? generateSecret('webhook') : null;
  return {
    plain: { ingest_api_key: ingest, agent_api_key: agent, zone_jwt_secret: zone, webhook_token: webhook },
    columns: {
      ingest_key_digest: digest(ingest),
      agent_key_digest: digest(agent),
      agent_key_enc: box.seal(agent, sealedAt('agents', 'agent_key_enc', agentId)),
      zone_secret_enc: box.seal(zone, sealedAt('agents', 'zone_secret_enc', agentId)),
      credentials_secret_enc: box.seal(randomBytes(32).toString('base64url'), sealedAt('agents', 'credentials_secret_enc', agentId)),
      webhook_token_digest: webhook ? digest(webhook) : null,
      webhook_token_enc: webhook ? box.seal(webhook, sealedAt('agents', 'webhook_token_enc', agentId)) : null,
    },
  };
}

/** Columns to write when one secret is rotated; the old value stops working with the UPDATE. */
export function rotatedSecret(
  box: SecretBox,
  agentId: number,
  kind: 'ingest' | 'agent' | 'webhook' | 'zone',
): { value: string; columns: Partial<AgentSecretColumns> } {
  const value = generateSecret(kind);
  switch (kind) {
    case 'ingest':
      return { value, columns: { ingest_key_digest: digest(value) } };
    case 'agent':
      return { value, columns: { agent_key_digest: digest(value), agent_key_enc: box.seal(value, sealedAt('agents', 'agent_key_enc', agentId)) } };
    case 'webhook':
      return { value, columns: { webhook_token_digest: digest(value), webhook_token_enc: box.seal(value, sealedAt('agents', 'webhook_token_enc', agentId)) } };
    case 'zone':
      return { value, columns: { zone_secret_enc: box.seal(value, sealedAt('agents', 'zone_secret_enc', agentId)) } };
  }
}
