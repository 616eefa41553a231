// The agent form's fields in the UI's words, and where they start: an existing agent's values, or for a new agent
// the API's own defaults (src/admin/agent-defaults.ts, the module POST /agents applies: issue 40 item 3, where the
// form offered 3600 s against the API's 2 hours). No JSX here, so the API's tests can check the two agree
// (test/admin/agents.test.ts).
import type { Agent } from '../api/client.ts';
import { AGENT_DEFAULTS } from '../../../src/admin/agent-defaults.ts';
import { pretty } from './format.ts';

export interface Fields {
  org_id: string; name: string; managed_by: Agent['managed_by']; status: Agent['status']; output_kind: Agent['output_kind'];
  running_timeout_s: string; poll_interval_s: string; default_input: string; runtime_id: string; target: string; zone_app_url: string;
  allow_webhook_triggers: boolean; allow_external_triggers: boolean;
}

const D = AGENT_DEFAULTS;

export function fieldsOf(a: Agent | null, orgId: string): Fields {
  return {
    org_id: a?.org_id ?? orgId, name: a?.name ?? '', managed_by: a?.managed_by ?? 'platform', status: a?.status ?? D.status,
    output_kind: a?.output_kind ?? D.output_kind, running_timeout_s: String((a?.running_timeout_ms ?? D.running_timeout_ms) / 1000),
    poll_interval_s: String(a?.poll_interval_s ?? D.poll_interval_s), default_input: pretty(a?.default_input ?? {}),
    runtime_id: a?.runtime_id ? String(a.runtime_id) : '', target: a?.target ?? '', zone_app_url: a?.zone_app_url ?? '',
    allow_webhook_triggers: a?.allow_webhook_triggers ?? D.allow_webhook_triggers, allow_external_triggers: a?.allow_external_triggers ?? D.allow_external_triggers,
  };
}
