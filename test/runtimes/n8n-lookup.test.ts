// Issue 11 item 1 / decisions.md "Recovering lost runs": how a lost run's execution is recognised in n8n's
// records — the workflow by its Webhook node's path, the execution by the payload its Webhook node received —
// and never another deployment's.
import { describe, expect, it } from 'vitest';
import { matchExecution, workflowsForPath, type ExecutionPage } from '../../src/runtimes/n8n-lookup.ts';

const webhookNode = (path: string, httpMethod = 'POST', name = 'Webhook') => ({ name, type: 'n8n-nodes-base.webhook', parameters: { path, httpMethod } });
const marker = { runId: 7, deploymentId: 'dep-a', createdAt: new Date('2026-03-01T10:00:00Z') };

function execution(id: string, body: unknown, startedAt = '2026-03-01T10:00:01Z', node = 'Webhook') {
  return {
    id,
    status: 'success',
    startedAt,
    data: { resultData: { runData: { [node]: [{ data: { main: [[{ json: { headers: {}, params: {}, query: {}, body } }]] } }] } } },
  };
}

describe('n8n lookup: the workflow of an agent path', () => {
  it('finds the workflows whose Webhook node answers POST on the path (slashes ignored), active ones first', () => {
    const page = {
      data: [
        { id: 'w1', active: false, nodes: [webhookNode('/orders/')] },
        { id: 'w2', active: true, nodes: [{ name: 'Set', type: 'n8n-nodes-base.set', parameters: {} }, webhookNode('orders', 'POST', 'Inbound')] },
        { id: 'w3', active: true, nodes: [webhookNode('orders', 'GET')] },
        { id: 'w4', active: true, nodes: [webhookNode('other')] },
      ],
    };
    expect(workflowsForPath(page, 'orders')).toEqual([
      { workflowId: 'w2', webhookNode: 'Inbound' },
      { workflowId: 'w1', webhookNode: 'Webhook' },
    ]);
  });

  it('reads the published graph (activeVersion) before a draft', () => {
    const page = { data: [{ id: 'w9', active: true, nodes: [webhookNode('draft-path')], activeVersion: { nodes: [webhookNode('live-path')] } }] };
    expect(workflowsForPath(page, 'live-path')).toEqual([{ workflowId: 'w9', webhookNode: 'Webhook' }]);
    expect(workflowsForPath(page, 'draft-path')).toEqual([]);
  });

  it('tolerates garbage: no data, nodes without parameters, ids that are not strings or numbers', () => {
    expect(workflowsForPath({}, 'x')).toEqual([]);
    expect(workflowsForPath({ data: [{ id: {}, nodes: [webhookNode('x')] }, { id: 5, nodes: [{ type: 'n8n-nodes-base.webhook' }] }] }, 'x')).toEqual([]);
  });
});

describe('n8n lookup: the execution of a run', () => {
  it('matches runId and deploymentId both; another deployment\'s run with the same id is not this run', () => {
    const page: ExecutionPage = { data: [execution('3', { runId: 7, deploymentId: 'dep-b' }), execution('2', { runId: 7, deploymentId: 'dep-a' })] };
    const m = matchExecution(page, 'Webhook', marker);
    expect(m.kind).toBe('found');
    expect(m.kind === 'found' && m.execution.id).toBe('2');
  });

  it('a running execution (listed with status=running, its data still the start data) is matched on the Webhook node\'s queued input', () => {
    // Shape measured on n8n 2.8.4 and 2.41.1 (test/fakes/n8n-captures/*/running-list-status-running.json).
    const running = {
      id: '12',
      status: 'running',
      startedAt: '2026-03-01T10:00:02Z',
      data: {
        resultData: { runData: {} },
        executionData: { nodeExecutionStack: [{ node: { name: 'Webhook' }, data: { main: [[{ json: { headers: {}, body: { runId: 7, deploymentId: 'dep-a' } } }]] } }] },
      },
    };
    const m = matchExecution({ data: [running] }, 'Webhook', marker);
    expect(m.kind === 'found' && m.execution.id).toBe('12');
  });

  it('a page that reached executions older than the run (minus a minute of skew) ends the search', () => {
    const older = { data: [execution('1', { runId: 1, deploymentId: 'dep-a' }, '2026-03-01T09:58:00Z')] };
    expect(matchExecution(older, 'Webhook', marker).kind).toBe('older_than_run');
    const skewed = { data: [execution('1', { runId: 1, deploymentId: 'dep-a' }, '2026-03-01T09:59:30Z')] };
    expect(matchExecution(skewed, 'Webhook', marker).kind).toBe('not_here');
  });

  it('executions without data, or whose Webhook node got something else, are passed over', () => {
    const page: ExecutionPage = { data: [{ id: '9', status: 'success' }, execution('8', 'not an object'), execution('7', { runId: 7, deploymentId: 'dep-a' }, undefined, 'Other')] };
    expect(matchExecution(page, 'Webhook', marker).kind).toBe('not_here');
  });
});
