// /review: every waiting run with what the workflow asks (description, output) beside the resume form. Built for
// a phone as much as a desk: one column under 700px, nothing wider than the screen.
import { api, unwrap } from '../api/client.ts';
import { agentName, useAgents } from '../lib/agents.ts';
import { useRunEvents } from '../lib/events.ts';
import { Link } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Json, Loaded, Time } from '../components/ui.tsx';
import { ResumeForm } from '../components/ResumeForm.tsx';

export function Review() {
  const waiting = useLoad(() => unwrap(api.GET('/api/admin/runs', { params: { query: { status: 'waiting', limit: '50' } } })), []);
  const agents = useAgents();
  useRunEvents((e) => e.status === 'waiting' || !!waiting.data?.data.some((r) => r.runId === e.runId), waiting.reload);
  return (
    <section aria-labelledby="review-title">
      <div className="title-row">
        <h1 id="review-title">Review</h1>
        <button type="button" onClick={waiting.reload}>Refresh</button>
      </div>
      <Loaded load={waiting} isEmpty={(p) => p.data.length === 0} empty="No run is waiting for a review.">
        {(p) => (
          <ul className="review-list">
            {p.data.map((r) => <ReviewItem key={r.runId} runId={r.runId} agent={agentName(agents.data, r.agentId)} created={r.created_at} done={waiting.reload} />)}
          </ul>
        )}
      </Loaded>
    </section>
  );
}

/** When the run entered its current wait: its timeline's last `waiting` entry (issue 40 item 7: it showed the creation). */
function waitingSince(timeline: Array<{ status: string; at: string }> | undefined): string | null {
  return timeline ? ([...timeline].reverse().find((t) => t.status === 'waiting')?.at ?? null) : null;
}

// The list view has no wait state; each card reads its run (description, url, output).
function ReviewItem({ runId, agent, created, done }: { runId: number; agent: string; created: string; done: () => void }) {
  const run = useLoad(() => unwrap(api.GET('/api/admin/runs/{runId}', { params: { path: { runId } } })), [runId]);
  return (
    <li className="card review-item" aria-labelledby={`review-${runId}`}>
      <div className="review-what">
        <h2 id={`review-${runId}`}><Link to={`/runs/${runId}`}>Run #{runId}</Link> · {agent}</h2>
        <p className="muted">Waiting since <Time iso={waitingSince(run.data?.timeline) ?? created} /></p>
        <Loaded load={run}>
          {(r) => r.wait ? (
            <>
              <p>{r.wait.description}</p>
              {r.wait.url && <p><a href={r.wait.url} target="_blank" rel="noreferrer noopener">Open the linked page</a></p>}
              {r.wait.output !== null && r.wait.output !== undefined && <Json value={r.wait.output} label={`Output of run ${runId}`} />}
            </>
          ) : <p className="muted">No description.</p>}
        </Loaded>
      </div>
      <div className="review-form">
        <ResumeForm runId={runId} done={done} />
      </div>
    </li>
  );
}
