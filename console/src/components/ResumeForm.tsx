// Resuming a waiting run as the signed-in user (POST /api/admin/runs/{id}/waitpoint): Approve / Reject send
// {"approved":true|false} as the waitpoint's payload; "Resume with JSON" sends any JSON object the workflow expects.
import { useState } from 'react';
import { api, unwrap } from '../api/client.ts';
import { parseJson } from '../lib/format.ts';
import { ErrorLine, useAction } from './ui.tsx';

export function ResumeForm({ runId, done }: { runId: number; done: () => void }) {
  const [payload, setPayload] = useState('{\n  "approved": true\n}');
  const action = useAction();
  const id = `resume-${runId}`;

  const send = async (data: Record<string, unknown>) => {
    const ok = await action.run(() => unwrap(api.POST('/api/admin/runs/{runId}/waitpoint', { params: { path: { runId } }, body: { payload: data } })));
    if (ok) done();
  };
  const parsed = parseJson(payload);
  const isObject = parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value);

  return (
    <form className="resume" aria-label={`Resume run ${runId}`} onSubmit={(e) => {
      e.preventDefault();
      if (isObject) void send(parsed.value as Record<string, unknown>);
    }}>
      <div className="actions">
        <button type="button" className="primary" disabled={action.busy} onClick={() => void send({ approved: true })}>Approve</button>
        <button type="button" className="danger" disabled={action.busy} onClick={() => void send({ approved: false })}>Reject</button>
      </div>
      <label htmlFor={id}>JSON payload</label>
      <textarea id={id} rows={5} value={payload} onChange={(e) => setPayload(e.target.value)} spellCheck={false}
        aria-invalid={!isObject || undefined} aria-describedby={isObject ? undefined : `${id}-err`} />
      {!isObject && <p id={`${id}-err`} className="field-error">{parsed.ok ? 'The payload must be a JSON object.' : `Not valid JSON: ${parsed.error}`}</p>}
      <button type="submit" disabled={action.busy || !isObject}>Resume with JSON</button>
      <ErrorLine error={action.error} />
    </form>
  );
}
