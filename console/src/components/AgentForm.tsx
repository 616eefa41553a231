// The agent's settings in the UI's words (spec field names in parentheses only where they differ). Creating sends
// POST /api/admin/agents; editing sends only the fields that changed (PATCH).
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Agent, type RequestBody, type Schemas } from '../api/client.ts';
import { fieldsOf, type Fields } from '../lib/agent-fields.ts';
import { parseJson } from '../lib/format.ts';
import { useAccess } from '../lib/session.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { ErrorLine, Field, useAction } from './ui.tsx';

type Body = RequestBody<'/api/admin/agents', 'post'>;

export function AgentForm({ agent, saved }: { agent: Agent | null; saved: (a: Schemas['Agent'] | Schemas['CreatedAgent']) => void }) {
  const access = useAccess();
  const orgs = useLoad(() => (access.platformAdmin ? unwrap(api.GET('/api/admin/orgs', { params: { query: { limit: '200' } } })).then((p) => p.data) : Promise.resolve(access.session.memberships.filter((m) => m.role === 'admin').map((m) => ({ id: m.org_id, name: m.org_name })))), []);
  const runtimes = useLoad(() => unwrap(api.GET('/api/admin/runtimes', { params: { query: { limit: '200' } } })).then((p) => p.data), []);
  const [f, setF] = useState<Fields>(() => fieldsOf(agent, access.managedOrgs?.[0] ?? ''));
  const action = useAction();
  const editable = agent === null || access.canManage(agent.org_id);
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setF((old) => ({ ...old, [k]: v }));
  const input = parseJson(f.default_input);
  const inputOk = input.ok && typeof input.value === 'object' && input.value !== null && !Array.isArray(input.value);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!inputOk) return;
    const body: Body = {
      org_id: f.org_id, name: f.name.trim(), managed_by: f.managed_by, status: f.status, output_kind: f.output_kind,
      running_timeout_ms: Math.round(Number(f.running_timeout_s) * 1000), poll_interval_s: Number(f.poll_interval_s),
      default_input: input.value as Record<string, unknown>, runtime_id: f.runtime_id ? Number(f.runtime_id) : null,
      target: f.target.trim() || null, zone_app_url: f.zone_app_url.trim() || null, allow_webhook_triggers: f.allow_webhook_triggers,
      ...(access.platformAdmin ? { allow_external_triggers: f.allow_external_triggers } : {}),
    };
    await action.run(async () => {
      if (agent === null) return saved(await unwrap(api.POST('/api/admin/agents', { body })));
      // Only what changed: a member's unchanged platform-only field is never sent back.
      const before = fieldsOf(agent, agent.org_id);
      const changed = Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'org_id' && (k === 'running_timeout_ms' ? f.running_timeout_s !== before.running_timeout_s : k === 'default_input' ? f.default_input !== before.default_input : JSON.stringify(body[k as keyof Body]) !== JSON.stringify((agent as Record<string, unknown>)[k]))));
      saved(await unwrap(api.PATCH('/api/admin/agents/{id}', { params: { path: { id: agent.id } }, body: changed })));
    });
  };

  return (
    <form className="card" onSubmit={(e) => void submit(e)} aria-label={agent ? 'Agent settings' : 'New agent'}>
      <fieldset className="form-grid" disabled={!editable || action.busy}>
        <Field label="Name"><input required maxLength={200} value={f.name} onChange={(e) => set('name', e.target.value)} /></Field>
        <Field label="Organization">
          <select required value={f.org_id} disabled={agent !== null} onChange={(e) => set('org_id', e.target.value)}>
            <option value="">Choose…</option>
            {orgs.data?.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
            {agent && !orgs.data?.some((o) => o.id === agent.org_id) && <option value={agent.org_id}>{access.orgName(agent.org_id)}</option>}
          </select>
        </Field>
        <Field label="Managed by">
          <select value={f.managed_by} onChange={(e) => set('managed_by', e.target.value as Fields['managed_by'])}>
            <option value="platform">The platform</option>
            <option value="standalone">Standalone (reports its own runs)</option>
          </select>
        </Field>
        <Field label="Status">
          <select value={f.status} onChange={(e) => set('status', e.target.value as Fields['status'])}>
            <option>active</option><option>paused</option><option>archived</option>
          </select>
        </Field>
        <Field label="Max run duration (seconds)">
          <input type="number" min={0.001} max={86400} step="any" required value={f.running_timeout_s} onChange={(e) => set('running_timeout_s', e.target.value)} />
        </Field>
        <Field label="Poll interval (seconds)">
          <input type="number" min={10} max={3600} required value={f.poll_interval_s} onChange={(e) => set('poll_interval_s', e.target.value)} />
        </Field>
        <Field label="Output kind">
          <select value={f.output_kind} onChange={(e) => set('output_kind', e.target.value as Fields['output_kind'])}>
            <option value="json">JSON</option><option value="file_download">File download</option>
          </select>
        </Field>
        <Field label="Runtime">
          {runtimes.data ? (
            <select value={f.runtime_id} onChange={(e) => set('runtime_id', e.target.value)}>
              <option value="">None</option>
              {runtimes.data.map((r) => <option key={r.id} value={r.id}>{r.name} ({r.kind})</option>)}
            </select>
          ) : <input inputMode="numeric" pattern="[0-9]*" value={f.runtime_id} onChange={(e) => set('runtime_id', e.target.value)} />}
        </Field>
        <Field label="Target (workflow or task id)"><input maxLength={1024} value={f.target} onChange={(e) => set('target', e.target.value)} /></Field>
        <Field label="Zone app URL"><input type="url" maxLength={2048} value={f.zone_app_url} onChange={(e) => set('zone_app_url', e.target.value)} /></Field>
        <Field className="wide" label="Default input (JSON object)">
          <textarea rows={5} spellCheck={false} value={f.default_input} onChange={(e) => set('default_input', e.target.value)} aria-invalid={!inputOk || undefined} />
        </Field>
        {!inputOk && <p className="field-error wide">{input.ok ? 'Default input must be a JSON object.' : `Not valid JSON: ${input.error}`}</p>}
        <label className="check"><input type="checkbox" checked={f.allow_webhook_triggers} onChange={(e) => set('allow_webhook_triggers', e.target.checked)} /> Allow webhook triggers</label>
        <label className="check"><input type="checkbox" checked={f.allow_external_triggers} disabled={!access.platformAdmin} onChange={(e) => set('allow_external_triggers', e.target.checked)} /> Allow external triggers{!access.platformAdmin && ' (platform admins only)'}</label>
        {editable && <button type="submit" className="primary">{agent ? 'Save changes' : 'Create agent'}</button>}
      </fieldset>
      <ErrorLine error={action.error} />
    </form>
  );
}
