// The agent's credentials. Keys are stored as digests, so they cannot be revealed: "Rotate" makes a new one and
// shows it once. The webhook token is kept sealed and can be revealed, copied and rotated; its URLs are ready to copy.
import { useState } from 'react';
import { api, EMPTY, unwrap, type Agent } from '../api/client.ts';
import { ConfirmButton, ErrorLine, Secret, useAction } from './ui.tsx';

const KEYS = [
  { kind: 'ingest', label: 'Ingest key', set: 'ingest_api_key_set' },
  { kind: 'agent', label: 'Agent key', set: 'agent_api_key_set' },
  { kind: 'zone', label: 'Zone JWT secret', set: 'zone_jwt_secret_set' },
] as const;

export function AgentKeys({ agent, changed }: { agent: Agent; changed: () => void }) {
  const id = String(agent.id);
  const [shown, setShown] = useState<Record<string, string>>({});
  const action = useAction();
  const rotate = (kind: 'ingest' | 'agent' | 'webhook' | 'zone') => void action.run(async () => {
    const k = await unwrap(api.POST('/api/admin/agents/{id}/keys/{kind}/rotate', { params: { path: { id: Number(id), kind } }, body: EMPTY }));
    setShown((s) => ({ ...s, [kind]: k.value }));
    changed();
  });
  const reveal = () => void action.run(async () => {
    const t = await unwrap(api.POST('/api/admin/agents/{id}/webhook-token', { params: { path: { id: Number(id) } } }));
    setShown((s) => ({ ...s, webhook: t.webhook_token }));
  });
  const token = shown.webhook;
  const base = `${location.origin}/api/agents/${agent.id}/runs`;
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">Keys and tokens</h2>
      <ErrorLine error={action.error} />
      <ul className="key-list">
        {KEYS.map((k) => (
          <li key={k.kind} className="card">
            <strong>{k.label}</strong> <span className="muted">{agent[k.set] ? 'set' : 'not set'}</span>
            {shown[k.kind] && <p>New value, shown once: <Secret value={shown[k.kind]!} label={k.label} /></p>}
            <div className="actions"><ConfirmButton label="Rotate" confirm="Confirm rotate" onConfirm={() => rotate(k.kind)} disabled={action.busy} /></div>
          </li>
        ))}
        <li className="card">
          <strong>Webhook token</strong> <span className="muted">{agent.webhook_token_set ? 'set' : 'not set'}</span>
          {token && (
            <>
              <p><Secret value={token} label="Webhook token" /></p>
              <p>Webhook URL: <Secret value={`${base}/webhook/${token}`} label="Webhook URL" /></p>
              <p>Webhook-and-wait URL: <Secret value={`${base}/webhook-and-wait/${token}`} label="Webhook-and-wait URL" /></p>
            </>
          )}
          <div className="actions">
            {agent.webhook_token_set && !token && <button type="button" disabled={action.busy} onClick={reveal}>Reveal</button>}
            <ConfirmButton label="Rotate" confirm="Confirm rotate" onConfirm={() => rotate('webhook')} disabled={action.busy} />
          </div>
        </li>
      </ul>
    </section>
  );
}
