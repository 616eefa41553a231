// The shared run presenters: admin-api.md `GET /runs/{runId}` and spec 4.2's 200 body.
import { describe, expect, it } from 'vitest';
import { errorText, toAdminRunView, toSyncRunView } from '../../src/runs/run-view.ts';
import type { RunRow } from '../../src/runs/runs-repo.ts';

const row = (over: Partial<RunRow> = {}): RunRow => ({
  id: 7,
  agent_id: 3,
  status: 'failed',
  source: 'trigger',
  external_run_id: 'run_abc',
  input: { a: 1 },
  metadata: { m: true },
  output_data: { partial: 1 },
  outputs: 2,
  error: { name: 'TypeError', message: 'x is undefined', stack: 'at secret/path.js:1' },
  duration_ms: 1500,
  wait_state: { tokenId: 'waitpoint_1', description: 'd', url: null, output: null },
  created_by: null,
  created_at: new Date('2026-01-01T00:00:00Z'),
  invoke_lease_until: null,
  runtime_note: null,
  replay_of: null,
  started_at: new Date('2026-01-01T00:00:01Z'),
  completed_at: new Date('2026-01-01T00:00:02.500Z'),
  next_poll_at: null,
  ...over,
});

describe('run presenters', () => {
  it('admin-api.md: the admin view has exactly the listed fields plus our documented additions (runtime_note, source)', () => {
    expect(Object.keys(toAdminRunView(row())).sort()).toEqual(
      ['runId', 'agentId', 'status', 'output_data', 'outputs', 'error', 'duration_ms', 'started_at', 'completed_at', 'created_at', 'created_by', 'external_run_id', 'metadata', 'input', 'runtime_note', 'source'].sort(),
    );
    expect(toAdminRunView(row())).toMatchObject({ runId: 7, agentId: 3, started_at: '2026-01-01T00:00:01.000Z', error: { message: 'x is undefined' } });
  });

  it('spec 4.2: the sync view has the 200 body fields and error as a string (a callback error becomes its message)', () => {
    const view = toSyncRunView(row());
    expect(view).toEqual({
      runId: 7,
      agentId: 3,
      status: 'failed',
      output_data: { partial: 1 },
      outputs: 2,
      error: 'x is undefined',
      duration_ms: 1500,
      started_at: '2026-01-01T00:00:01.000Z',
      completed_at: '2026-01-01T00:00:02.500Z',
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(JSON.stringify(view)).not.toContain('secret/path');
  });

  it('spec 2.2: an ingest error string stays; a name-only error gives its name; nothing gives null', () => {
    expect(errorText('Upstream refused')).toBe('Upstream refused');
    expect(errorText({ name: 'AbortError' })).toBe('AbortError');
    expect(errorText({})).toBeNull();
    expect(errorText(null)).toBeNull();
    expect(toSyncRunView(row({ error: null, started_at: null, completed_at: null, duration_ms: null }))).toMatchObject({ error: null, started_at: null, completed_at: null, duration_ms: null });
  });
});
