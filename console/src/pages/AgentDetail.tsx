// /agents/{id} (and /agents/new): the agent's settings, keys and webhook token, connections, webhook actions,
// "Run now" and "Open zone app". Controls the user's role cannot use are not shown (the API refuses them: 403).
import { useState } from 'react';
import { api, ApiFailure, unwrap, type Schemas } from '../api/client.ts';
import { parseJson, pretty } from '../lib/format.ts';
import { useAccess } from '../lib/session.tsx';
import { Link, navigate } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { ErrorLine, Loaded, Secret, StatusBadge, useAction } from '../components/ui.tsx';
import { AgentForm } from '../components/AgentForm.tsx';
import { AgentKeys } from '../components/AgentKeys.tsx';
import { Connections } from '../components/Connections.tsx';
import { WebhookActions } from '../components/WebhookActions.tsx';

export function AgentDetail({ id }: { id: string | null }) {
  const [created, setCreated] = useState<Schemas['CreatedAgent'] | null>(null);
  if (id === null) {
    if (created) return <CreatedKeys agent={created} />;
    return (
      <section aria-labelledby="new-agent-title">
        <h1 id="new-agent-title">New agent</h1>
        <AgentForm agent={null} saved={(a) => setCreated(a as Schemas['CreatedAgent'])} />
      </section>
    );
  }
  return <ExistingAgent id={id} />;
}

// The keys of a new agent exist in clear only in this answer: shown once, to copy now.
function CreatedKeys({ agent }: { agent: Schemas['CreatedAgent'] }) {
  return (
    <section aria-labelledby="created-title">
      <h1 id="created-title">Agent “{agent.name}” created</h1>
      <p className="notice">Copy these now: they are not shown again (you can rotate them later).</p>
      <dl className="facts">
        <dt>Ingest key</dt><dd><Secret value={agent.ingest_api_key} label="Ingest key" /></dd>
        <dt>Agent key</dt><dd><Secret value={agent.agent_api_key} label="Agent key" /></dd>
        <dt>Zone JWT secret</dt><dd><Secret value={agent.zone_jwt_secret} label="Zone JWT secret" /></dd>
        {agent.webhook_token && <><dt>Webhook token</dt><dd><Secret value={agent.webhook_token} label="Webhook token" /></dd></>}
      </dl>
      <button type="button" className="primary" onClick={() => navigate(`/agents/${agent.id}`)}>Open the agent</button>
    </section>
  );
}

function ExistingAgent({ id }: { id: string }) {
  const access = useAccess();
  const agent = useLoad(() => unwrap(api.GET('/api/admin/agents/{id}', { params: { path: { id: Number(id) } } })), [id]);
  return (
    <Loaded load={agent}>
      {(a) => {
        const manage = access.canManage(a.org_id);
        return (
          <article aria-labelledby="agent-title">
            <div className="title-row">
              <h1 id="agent-title">{a.name} <StatusBadge status={a.status} /></h1>
              <div className="actions">
                <Link to={`/runs?agent_id=${a.id}`}>Runs</Link>
                {a.zone_app_url && <Link to={`/zone-apps/${a.id}`} className="button">Open zone app</Link>}
              </div>
            </div>
            <p className="muted">{access.orgName(a.org_id)} · managed by {a.managed_by}</p>
            {a.managed_by === 'platform' && a.status === 'active' && <RunNow agentId={a.id} defaultInput={a.default_input} />}
            <h2>Settings</h2>
            <AgentForm key={a.updated_at} agent={a} saved={agent.reload} />
            {manage && <AgentKeys agent={a} changed={agent.reload} />}
            <Connections agentId={a.id} manage={manage} />
            <WebhookActions agentId={a.id} manage={manage} />
          </article>
        );
      }}
    </Loaded>
  );
}

function RunNow({ agentId, defaultInput }: { agentId: number; defaultInput: Record<string, unknown> }) {
  const [text, setText] = useState(pretty(defaultInput));
  const action = useAction();
  // A start the runtime refused still made a run (failed, with the reason): issue 40 item 7, its link.
  const [failedRun, setFailedRun] = useState<number | null>(null);
  const parsed = parseJson(text);
  const ok = parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value);
  const run = () => void action.run(async () => {
    setFailedRun(null);
    const input = parsed.ok ? (parsed.value as Record<string, unknown>) : undefined;
    try {
      const started = await unwrap(api.POST('/api/admin/agents/{id}/runs', { params: { path: { id: agentId } }, body: { input } }));
      // The outcome arrives later: the run's page follows it live.
      navigate(`/runs/${started.runId}`);
    } catch (err) {
      if (err instanceof ApiFailure) setFailedRun(err.runId);
      throw err;
    }
  });
  return (
    <details className="card">
      <summary>Run now</summary>
      <label htmlFor={`run-input-${agentId}`}>Input (JSON object)</label>
      <textarea id={`run-input-${agentId}`} rows={5} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} aria-invalid={!ok || undefined} />
      {!ok && <p className="field-error">{parsed.ok ? 'Input must be a JSON object.' : `Not valid JSON: ${parsed.error}`}</p>}
      <button type="button" className="primary" disabled={!ok || action.busy} onClick={run}>Start run</button>
      <ErrorLine error={action.error} />
      {action.error && failedRun !== null && <p><Link to={`/runs/${failedRun}`}>Open run #{failedRun}</Link> to see what happened.</p>}
    </details>
  );
}
