import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { N8nAdapter } from '../../src/runtimes/n8n-adapter.ts';
import { RuntimeHttp } from '../../src/runtimes/http.ts';
import { EMPTY_ANSWER_ERROR } from '../../src/runtimes/n8n-mapping.ts';
import type { Invoked, Outcome, RuntimeConnection, RuntimeFailure, TaskPayload } from '../../src/runtimes/runtime-adapter.ts';
import { N8nFake, n8nAnswers, type N8nAnswer, type N8nExecutionStatus } from '../fakes/n8n-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';

const fake = new N8nFake();
// Short API timeouts: held webhook calls must not be bounded by them (only by the caller's signal).
const http = new RuntimeHttp({ timeouts: { connectMs: 500, headersMs: 300, bodyMs: 300 } });
const adapter = new N8nAdapter({ http });
let runtime: RuntimeConnection;
const failures: RuntimeFailure[] = [];

const payload = (runId: number): TaskPayload => ({ runId, input: { q: 1 }, credentialsToken: 'jwt' });

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`expected ok, got ${JSON.stringify(o.failure)}`);
  return o.value;
}
function failed<T>(o: Outcome<T>): RuntimeFailure {
  if (o.ok) throw new Error('expected a failure');
  failures.push(o.failure);
  return o.failure;
}

let seq = 0;
/** Registers `workflow` on a fresh path and invokes it. */
/** The execution the fake started for webhook path `path` (it may record it a moment after invoke resolved). */
async function executionFor(path: string) {
  return vi.waitFor(() => {
    const ex = [...fake.executions.values()].find((e) => e.workflowPath === path);
    if (!ex) throw new Error('not started yet');
    return ex;
  });
}

async function invokeWith(workflow: Parameters<N8nFake['registerWorkflow']>[1], signal?: AbortSignal): Promise<Invoked> {
  const path = `wf-${++seq}`;
  fake.registerWorkflow(path, workflow);
  return ok(await adapter.invoke({ runtime, target: path, payload: payload(seq), signal }));
}

beforeAll(async () => {
  await fake.start();
  runtime = { id: 2, kind: 'workflow', baseUrl: fake.url, apiKey: fake.apiKey };
});
afterEach(() => fake.clearFaults());
afterAll(async () => {
  for (const f of failures) expect(f.message).not.toContain(fake.apiKey);
  await fake.stop(); // first: it drops held calls, which a graceful close() would wait for
  await http.close();
});

describe('n8n adapter: held webhook call', () => {
  it('declares a workflow runtime with synchronous invoke and waitpoints', () => {
    expect([adapter.kind, adapter.supportsSyncInvoke, adapter.supportsWaitpoints]).toEqual(['workflow', true, true]);
  });

  it('resolves once the request is sent, and the answer when the workflow answers', async () => {
    let release!: (a: N8nAnswer) => void;
    const invoked = await invokeWith(() => new Promise<N8nAnswer>((r) => (release = r)));
    expect(invoked.externalRunId).toBeNull();
    await executionFor(`wf-${seq}`);
    const call = fake.webhookCalls(`wf-${seq}`)[0]!;
    expect(call.body).toEqual(payload(seq));
    expect(call.headers['x-n8n-api-key']).toBeUndefined(); // webhook headers are workflow data
    let settled = false;
    void invoked.answer!.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 700)); // longer than every API timeout configured above
    expect(settled).toBe(false);
    release({ json: { result: 'ok', outputs: 2 }, executionIdHeader: true });
    const answer = await invoked.answer!;
    expect(answer).toMatchObject({ status: 'completed', output: { result: 'ok', outputs: 2 }, error: null, httpStatus: 200 });
    expect(answer.externalRunId).toMatch(/^\d+$/);
  });

  it('has no execution id unless the Respond node sends the header', async () => {
    expect((await (await invokeWith({ json: { a: 1 } })).answer!).externalRunId).toBeNull();
  });

  it('treats an empty 200 as a failed run', async () => {
    expect(await (await invokeWith(n8nAnswers.emptyOk())).answer!).toMatchObject({ status: 'failed', error: EMPTY_ANSWER_ERROR });
  });

  it('treats a non-JSON 200 as a failed run', async () => {
    expect((await (await invokeWith({ text: 'done' })).answer!).status).toBe('failed');
  });

  it.each([
    ['Error in workflow', n8nAnswers.errorInWorkflow()],
    ['The execution was cancelled because it timed out', n8nAnswers.timedOut()],
  ])('fails with n8n\'s message on a 500: %s', async (message, answer) => {
    expect(await (await invokeWith(answer)).answer!).toMatchObject({ status: 'failed', error: message, httpStatus: 500 });
  });

  it('refuses the run with n8n\'s message on an unregistered webhook (its 404 comes at once: runtimes.md "n8n")', async () => {
    const f = failed(await adapter.invoke({ runtime, target: 'nobody/here', payload: payload(1) }));
    expect(f.kind).toBe('rejected');
    expect(f.message).toContain('n8n webhook: ');
    expect(f.message).toContain('"POST nobody/here" is not registered');
    expect(fake.requestsTo('/webhook/nobody/here')).toHaveLength(1);
  });

  it('refuses a path that would climb out of /webhook/', async () => {
    expect(failed(await adapter.invoke({ runtime, target: '../api/v1/executions', payload: payload(1) })).kind).toBe('rejected');
  });

  it('reports a runtime it cannot connect to as unreachable, quickly', async () => {
    const t0 = Date.now();
    const f = failed(await adapter.invoke({ runtime: { ...runtime, baseUrl: await unusedUrl() }, target: 'x', payload: payload(1) }));
    expect(f.kind).toBe('unreachable');
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('ends the held call when the caller\'s signal fires', async () => {
    const ac = new AbortController();
    const invoked = await invokeWith(n8nAnswers.never(), ac.signal);
    const ex = await executionFor(`wf-${seq}`);
    ac.abort();
    expect(await invoked.answer!).toMatchObject({ status: 'failed', aborted: true, externalRunId: null });
    await vi.waitFor(() => expect(ex.clientGone).toBe(true));
  });

  it('fails the trigger itself when the signal fired before the request went out', async () => {
    fake.registerWorkflow('early', { json: {} });
    const f = failed(await adapter.invoke({ runtime, target: 'early', payload: payload(1), signal: AbortSignal.abort() }));
    expect(f.kind).toBe('timeout');
  });

  it('holds many calls at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fake.registerWorkflow('many', async (ctx) => {
      await gate;
      return { json: { n: (ctx.body as TaskPayload).runId } };
    });
    const invoked = await Promise.all(Array.from({ length: 300 }, (_, i) => adapter.invoke({ runtime, target: 'many', payload: payload(i) })));
    release();
    const answers = await Promise.all(invoked.map((o) => ok(o).answer!));
    expect(answers.map((a) => (a.output as { n: number }).n)).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it('reads an HTML answer as a failed run, not a crash', async () => {
    fake.registerWorkflow('html', { json: {} });
    fake.setFault({ kind: 'garbage' }, { path: '/webhook/html', times: 1 });
    expect((await ok(await adapter.invoke({ runtime, target: 'html', payload: payload(1) })).answer!).status).toBe('failed');
  });
});

describe('n8n adapter: executions API', () => {
  const cases: Array<[N8nExecutionStatus, string]> = [
    ['new', 'queued'], ['running', 'running'], ['waiting', 'running'], ['success', 'completed'],
    ['error', 'failed'], ['crashed', 'failed'], ['canceled', 'cancelled'], ['unknown', 'unknown'],
  ];
  it.each(cases)('maps execution status %s to %s', async (word, mapped) => {
    const ex = fake.createExecution({ status: word, stoppedAt: new Date() });
    const s = ok(await adapter.fetchStatus(runtime, ex.id));
    expect(s).toMatchObject({ status: mapped, runtimeStatus: word });
    expect(fake.requestsTo(`/api/v1/executions/${ex.id}`).at(-1)!.query.get('includeData')).toBe('true');
  });

  it('reads output, error and times from the execution data', async () => {
    const invoked = await invokeWith({ json: { total: 3 }, executionIdHeader: true });
    const { externalRunId } = await invoked.answer!;
    const s = ok(await adapter.fetchStatus(runtime, externalRunId!));
    expect(s).toMatchObject({ status: 'completed', output: { total: 3 }, error: null });
    expect(s.finishedAt!.getTime()).toBeGreaterThanOrEqual(s.startedAt!.getTime());
    const broken = fake.createExecution({ status: 'error', error: { message: 'Code node threw' } });
    expect(ok(await adapter.fetchStatus(runtime, broken.id)).error).toBe('Code node threw');
  });

  it('issue 12: reports the workflow the execution ran and the paths its Webhook nodes answer POST on (its own copy of the graph)', async () => {
    const ex = fake.createExecution({ status: 'success', workflowPath: 'agents/billing/' });
    expect(ok(await adapter.fetchStatus(runtime, ex.id)).owner).toEqual({ workflowId: fake.workflowId('agents/billing/'), webhookPaths: ['agents/billing'] });
  });

  it('issue 12: an execution id of "." or ".." never reaches n8n as a dot segment', async () => {
    const before = fake.requests.length;
    for (const id of ['.', '..']) expect(failed(await adapter.fetchStatus(runtime, id))).toMatchObject({ kind: 'rejected', message: expect.stringMatching(/"\.\."/) });
    for (const id of ['.', '..']) expect(failed(await adapter.cancel(runtime, id)).kind).toBe('rejected');
    expect(fake.requests.length).toBe(before);
  });

  it('needs the API key: not_supported without one, rejected with a wrong one, 404 for an unknown id', async () => {
    expect(failed(await adapter.fetchStatus({ ...runtime, apiKey: null }, '1')).kind).toBe('not_supported');
    expect(failed(await adapter.fetchStatus({ ...runtime, apiKey: 'n8n_wrong_key' }, '1'))).toMatchObject({ kind: 'rejected', httpStatus: 401 });
    expect(failed(await adapter.fetchStatus(runtime, '999999'))).toMatchObject({ kind: 'rejected', httpStatus: 404 });
  });

  it('lists node runs as logs', async () => {
    const ex = fake.createExecution({ status: 'error', runData: {
      Webhook: [{ startTime: 1_767_261_600_000, executionTime: 2, executionStatus: 'success', data: { main: [[{ json: {} }]] } }],
      Code: [{ startTime: 1_767_261_600_010, executionTime: 5, executionStatus: 'error', error: { message: 'bad input' } }],
    } });
    expect(ok(await adapter.fetchLogs(runtime, ex.id))).toEqual([
      { time: '2026-01-01T10:00:00.000Z', level: 'info', message: 'Webhook success, 1 item(s)', isError: false, durationMs: 2, node: 'Webhook' },
      { time: '2026-01-01T10:00:00.010Z', level: 'error', message: 'Code error, 0 item(s): bad input', isError: true, durationMs: 5, node: 'Code' },
    ]);
  });

  it('stops an execution (2.41.1): the held call answers cancelled, a second stop is still ok', async () => {
    const invoked = await invokeWith(n8nAnswers.never());
    const ex = await executionFor(`wf-${seq}`);
    ok(await adapter.cancel(runtime, ex.id));
    expect(await invoked.answer!).toMatchObject({ status: 'cancelled', error: 'The execution was cancelled manually' });
    ok(await adapter.cancel(runtime, ex.id)); // 409 at n8n
    expect(fake.requestsTo(`/api/v1/executions/${ex.id}/stop`)).toHaveLength(2);
  });

  it('reports stop as not_supported on n8n without the endpoint (2.8.4)', async () => {
    fake.stopEndpoint = false;
    try {
      const ex = fake.createExecution({ status: 'running' });
      expect(failed(await adapter.cancel(runtime, ex.id))).toMatchObject({ kind: 'not_supported', httpStatus: 404 });
    } finally {
      fake.stopEndpoint = true;
    }
  });
});

describe('n8n adapter: waitpoints through resume URLs', () => {
  it('inspects and resumes a waiting execution on the runtime\'s own origin', async () => {
    let resumeUrl = '';
    const invoked = await invokeWith(async (ctx) => {
      resumeUrl = ctx.resumeUrl;
      const decision = await ctx.waitForResume();
      return { json: { decision } };
    });
    await vi.waitFor(() => expect(resumeUrl).not.toBe(''));
    expect(ok(await adapter.inspectWaitpoint(runtime, resumeUrl)).status).toBe('WAITING');
    ok(await adapter.completeWaitpoint(runtime, resumeUrl, { approved: true }));
    expect(fake.resumeCalls().at(-1)!.body).toEqual({ approved: true });
    expect(fake.resumeCalls().at(-1)!.headers['x-n8n-api-key']).toBeUndefined();
    expect((await invoked.answer!).output).toEqual({ decision: { approved: true } });
    expect(ok(await adapter.inspectWaitpoint(runtime, resumeUrl)).status).toBe('COMPLETED');
    expect(failed(await adapter.completeWaitpoint(runtime, resumeUrl, {}))).toMatchObject({ kind: 'rejected', httpStatus: 409 });
  });

  it('answers UNKNOWN without an API key or without an execution id in the URL', async () => {
    const ex = fake.createExecution({ status: 'waiting' });
    expect(ok(await adapter.inspectWaitpoint({ ...runtime, apiKey: null }, fake.resumeUrl(ex.id))).status).toBe('UNKNOWN');
    expect(ok(await adapter.inspectWaitpoint(runtime, `${fake.url}/form-waiting`)).status).toBe('UNKNOWN');
  });

  it('refuses a resume URL on another origin without sending anything', async () => {
    const before = fake.requests.length;
    const other = fake.resumeUrl('1').replace('127.0.0.1', 'localhost');
    expect(failed(await adapter.completeWaitpoint(runtime, other, { x: 1 })).kind).toBe('rejected');
    expect(failed(await adapter.completeWaitpoint(runtime, 'http://169.254.169.254/latest', {})).kind).toBe('rejected');
    expect(failed(await adapter.inspectWaitpoint(runtime, 'not a url')).kind).toBe('rejected');
    expect(fake.requests.length).toBe(before);
  });
});
