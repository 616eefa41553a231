// /runs/{id}: one run — status, timeline, input, output, error, wait state with the resume form, logs, outbound
// deliveries, cancel and replay. Waiting notifications link here ({ARS_PUBLIC_URL}/runs/{id}).
import { useState } from 'react';
import { api, EMPTY, unwrap } from '../api/client.ts';

import { useRunEvents } from '../lib/events.ts';
import { duration, errorText } from '../lib/format.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { useAccess } from '../lib/session.tsx';
import { ConfirmButton, ErrorLine, Json, Loaded, StatusBadge, Time, useAction } from '../components/ui.tsx';
import { ResumeForm } from '../components/ResumeForm.tsx';
import { Deliveries } from '../components/Deliveries.tsx';

const TERMINAL = ['completed', 'failed', 'cancelled'];

export function RunDetail({ id }: { id: string }) {
  const runId = Number(id);
  const run = useLoad(() => unwrap(api.GET('/api/admin/runs/{runId}', { params: { path: { runId: Number(id) } } })), [id]);
  const access = useAccess();
  const action = useAction();
  // The run's organization decides what the user may do with it (issue 40 item 2): read from its agent.
  const agentId = run.data?.agentId;
  const agent = useLoad(() => (agentId === undefined ? Promise.resolve(null) : unwrap(api.GET('/api/admin/agents/{id}', { params: { path: { id: agentId } } }))), [agentId]);
  const orgId = agent.data?.org_id ?? null;
  const may = (operation: string) => orgId !== null && access.may(operation, orgId);
  useRunEvents((e) => e.runId === runId, run.reload);

  const cancel = () => void action.run(() => unwrap(api.POST('/api/admin/runs/{runId}/cancel', { params: { path: { runId: Number(id) } }, body: EMPTY })).then(run.reload));
  const replay = () => void action.run(async () => {
    const created = await unwrap(api.POST('/api/admin/runs/{runId}/replay', { params: { path: { runId: Number(id) } }, body: EMPTY }));
    navigate(`/runs/${created.runId}`);
  });

  return (
    <Loaded load={run}>
      {(r) => (
        <article aria-labelledby="run-title">
          <div className="title-row">
            <h1 id="run-title">Run #{r.runId} <StatusBadge status={r.status} /></h1>
            <div className="actions">
              <button type="button" onClick={run.reload}>Refresh</button>
              {may('POST /runs/:runId/replay') && <button type="button" disabled={action.busy} onClick={replay}>Replay</button>}
              {!TERMINAL.includes(r.status) && may('POST /runs/:runId/cancel') && <ConfirmButton label="Cancel" confirm="Confirm cancel" onConfirm={cancel} disabled={action.busy} />}
            </div>
          </div>
          <ErrorLine error={action.error} />
          <dl className="facts">
            <dt>Agent</dt><dd><Link to={`/agents/${r.agentId}`}>{agent.data?.name ?? `Agent ${r.agentId}`}</Link></dd>
            <dt>Source</dt><dd>{r.source}</dd>
            <dt>Created</dt><dd><Time iso={r.created_at} /></dd>
            <dt>Started</dt><dd><Time iso={r.started_at} /></dd>
            <dt>Completed</dt><dd><Time iso={r.completed_at} /></dd>
            <dt>Duration</dt><dd>{duration(r.duration_ms)}</dd>
            <dt>Outputs</dt><dd>{r.outputs}</dd>
            <dt>External run id</dt><dd className="mono">{r.external_run_id ?? '—'}</dd>
            <dt>Created by</dt><dd className="mono">{r.created_by ?? '—'}</dd>
            {r.replay_of !== null && <><dt>Replay of</dt><dd><Link to={`/runs/${r.replay_of}`}>Run #{r.replay_of}</Link></dd></>}
            {r.replays.length > 0 && <><dt>Replayed as</dt><dd>{r.replays.map((n) => <Link key={n} to={`/runs/${n}`} className="inline-link">Run #{n}</Link>)}</dd></>}
          </dl>
          {r.runtime_note && <p className="notice">{r.runtime_note}</p>}

          {r.wait && (
            <section className="card wait" aria-labelledby="wait-title">
              <h2 id="wait-title">Waiting</h2>
              <p>{r.wait.description}</p>
              {r.wait.url && <p><a href={r.wait.url} target="_blank" rel="noreferrer noopener">{r.wait.url}</a></p>}
              {r.wait.output !== null && r.wait.output !== undefined && <Json value={r.wait.output} label="Wait output" />}
              {r.status === 'waiting' && <ResumeForm runId={r.runId} done={run.reload} />}
            </section>
          )}

          {r.error !== null && (
            <section aria-labelledby="error-title">
              <h2 id="error-title">Error</h2>
              {typeof r.error === 'string' ? <pre className="json error-text">{errorText(r.error)}</pre> : <Json value={r.error} label="Error" />}
            </section>
          )}

          <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">Timeline</h2>
            {r.timeline.length === 0 ? <p className="muted empty">No transitions recorded.</p> : (
              <ol className="timeline">
                {r.timeline.map((t, i) => (
                  <li key={i}><StatusBadge status={t.status} /> <Time iso={t.at} /> <span className="muted">via {t.via}</span></li>
                ))}
              </ol>
            )}
          </section>

          <section aria-labelledby="input-title">
            <h2 id="input-title">Input</h2>
            <p className="muted">As stored: secret fields are masked.</p>
            <Json value={r.input} label="Input" />
          </section>
          <section aria-labelledby="output-title">
            <h2 id="output-title">Output</h2>
            {r.output_data === null ? <p className="muted empty">No output.</p> : <Json value={r.output_data} label="Output" />}
          </section>
          {Object.keys(r.metadata).length > 0 && (
            <section aria-labelledby="meta-title"><h2 id="meta-title">Metadata</h2><Json value={r.metadata} label="Metadata" /></section>
          )}
          <Logs runId={id} />
          <Deliveries runId={id} canRedeliver={may('POST /runs/:runId/deliveries/:deliveryId/redeliver')} />
        </article>
      )}
    </Loaded>
  );
}

function Logs({ runId }: { runId: string }) {
  const [shown, setShown] = useState(false);
  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">Logs</h2>
      {shown ? <LogList runId={runId} /> : <button type="button" onClick={() => setShown(true)}>Load logs</button>}
    </section>
  );
}

function LogList({ runId }: { runId: string }) {
  const logs = useLoad(() => unwrap(api.GET('/api/admin/runs/{runId}/logs', { params: { path: { runId: Number(runId) } } })), [runId]);
  return (
    <Loaded load={logs} isEmpty={(l) => l.logs.length === 0} empty="The runtime has no logs for this run.">
      {(l) => (
        <ol className="logs">
          {l.logs.map((line, i) => (
            <li key={i} className={line.isError ? 'log-error' : undefined}>
              <Time iso={line.time} /> <span className="badge">{line.level}</span> {line.node && <span className="muted">{line.node}</span>} {line.message}
            </li>
          ))}
        </ol>
      )}
    </Loaded>
  );
}
