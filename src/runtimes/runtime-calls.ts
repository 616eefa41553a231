// Every API call the runtime adapters make through RuntimeHttp.call, by the name their failure messages use, with
// the labels it is measured under (ars_runtime_call_duration_seconds). A closed table: the name is typed, so a new
// call cannot be made without a row here, and no label can carry a URL, an id or a tenant's target name.
import type { RuntimeKind } from './runtime-adapter.ts';

export const RUNTIME_CALLS = {
  'n8n executions API': { runtime: 'workflow', operation: 'execution_read' }, // status, logs, waitpoints, recovery lookup
  'n8n workflows API': { runtime: 'workflow', operation: 'workflow_list' }, // recovery lookup: which workflow
  'n8n stop': { runtime: 'workflow', operation: 'cancel' },
  'n8n resume': { runtime: 'workflow', operation: 'waitpoint_complete' },
  'Trigger.dev trigger': { runtime: 'task', operation: 'trigger' },
  'Trigger.dev retrieve run': { runtime: 'task', operation: 'run_read' },
  'Trigger.dev list runs': { runtime: 'task', operation: 'run_list' }, // recovery lookup by tag
  'Trigger.dev cancel': { runtime: 'task', operation: 'cancel' },
  'Trigger.dev waitpoint': { runtime: 'task', operation: 'waitpoint_read' },
  'Trigger.dev complete waitpoint': { runtime: 'task', operation: 'waitpoint_complete' },
  'Trigger.dev run events': { runtime: 'task', operation: 'logs' },
  'Trigger.dev output download': { runtime: 'task', operation: 'output_download' },
} as const satisfies Record<string, { runtime: RuntimeKind; operation: string }>;

export type RuntimeCallName = keyof typeof RUNTIME_CALLS;
