import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TriggerDevAdapter } from '../../src/runtimes/trigger-dev-adapter.ts';
import { PREVIEW_KEY_REFUSED } from '../../src/runtimes/trigger-dev-mapping.ts';
import { RuntimeHttp } from '../../src/runtimes/http.ts';
import { createOutboundClient } from '../../src/lib/safe-http.ts';
import type { Outcome, RuntimeConnection, RuntimeFailure, TaskPayload } from '../../src/runtimes/runtime-adapter.ts';
import { TriggerDevFake, type TriggerStatus } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';

const fake = new TriggerDevFake();
const http = new RuntimeHttp({ timeouts: { connectMs: 500, headersMs: 400, bodyMs: 400 }, maxJsonBytes: 2 * 1024 * 1024 });
// The fake serves presigned outputs itself, on 127.0.0.1: the operator's allow-list lets the guarded client reach it.
const outbound = createOutboundClient({ allowHosts: ['127.0.0.1'] });
const adapter = new TriggerDevAdapter({ http, outbound });
let runtime: RuntimeConnection;
const failures: RuntimeFailure[] = [];

function payload(runId: number): TaskPayload {
  return { runId, input: { topic: 'x' }, connectionIds: { gh: { integrationId: 'gh', connectionId: 'c1' } }, credentialsToken: 'jwt.tok.en' };
}

function expectFailure<T>(o: Outcome<T>): RuntimeFailure {
  if (o.ok) throw new Error(`expected a failure, got ${JSON.stringify(o.value)}`);
  failures.push(o.failure);
  return o.failure;
}

function expectOk<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`expected ok, got ${JSON.stringify(o.failure)}`);
  return o.value;
}

async function triggered(runId: number): Promise<string> {
  return expectOk(await adapter.invoke({ runtime, target: 'agent-task', payload: payload(runId) })).externalRunId!;
}

beforeAll(async () => {
  await fake.start();
  fake.registerTask('agent-task');
  runtime = { id: 1, kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey };
});
afterEach(() => fake.clearFaults());
afterAll(async () => {
  // No failure message, whatever the path, may carry the secret key.
  for (const f of failures) expect(f.message).not.toContain(fake.secretKey);
  await http.close();
  await outbound.close();
  await fake.stop();
});

describe('Trigger.dev adapter: trigger', () => {
  it('declares a task runtime with waitpoints and no synchronous invoke', () => {
    expect([adapter.kind, adapter.supportsSyncInvoke, adapter.supportsWaitpoints]).toEqual(['task', false, true]);
  });

  it('triggers with the run id as idempotency key, a run tag, a 10 minute ttl and the api version', async () => {
    const id = await triggered(42);
    expect(id).toMatch(/^run_/);
    const req = fake.triggers().at(-1)!;
    expect(req.path).toBe('/api/v1/tasks/agent-task/trigger');
    expect(req.headers.authorization).toBe(`Bearer ${fake.secretKey}`);
    expect(req.headers['x-trigger-api-version']).toBe('2025-07-16');
    expect(req.body).toEqual({
      payload: payload(42),
      options: { idempotencyKey: '42', tags: ['ars_run:42'], ttl: '10m' },
    });
  });

  it('never sends anything beyond the spec 2.3 payload fields (no agent key)', async () => {
    const sneaky = { ...payload(43), agentApiKey: 'ars_agent_secret' } as TaskPayload;
    await adapter.invoke({ runtime, target: 'agent-task', payload: sneaky });
    const req = fake.triggers().at(-1)!;
    expect(req.rawBody).not.toContain('ars_agent_secret');
    expect(Object.keys((req.body as { payload: object }).payload).sort()).toEqual(['connectionIds', 'credentialsToken', 'input', 'runId']);
  });

  it('gets the same run back when a trigger is repeated', async () => {
    expect(await triggered(44)).toBe(await triggered(44));
  });

  it('reports an unknown task as rejected 404 with Trigger.dev\'s message', async () => {
    const f = expectFailure(await adapter.invoke({ runtime, target: 'nope', payload: payload(1) }));
    expect(f).toMatchObject({ kind: 'rejected', httpStatus: 404 });
    expect(f.message).toContain('Task not found');
  });

  it('reports a wrong or missing key as rejected without echoing it', async () => {
    const bad = { ...runtime, apiKey: 'tr_dev_wrongwrongwrong' };
    const f = expectFailure(await adapter.invoke({ runtime: bad, target: 'agent-task', payload: payload(1) }));
    expect(f).toMatchObject({ kind: 'rejected', httpStatus: 401 });
    expect(f.message).not.toContain('tr_dev_wrongwrongwrong');
    expect(expectFailure(await adapter.fetchStatus({ ...runtime, apiKey: null }, 'run_x')).kind).toBe('rejected');
  });

  it('issue 36 item 8: a preview-branch key (no branch header: Trigger.dev finds no environment) is refused with the reason', async () => {
    const preview = new TriggerDevFake({ previewBranch: 'feature-x' });
    await preview.start();
    try {
      preview.registerTask('agent-task');
      expect(preview.secretKey).toMatch(/^tr_preview_/);
      const f = expectFailure(await adapter.invoke({ runtime: { ...runtime, baseUrl: preview.url, apiKey: preview.secretKey }, target: 'agent-task', payload: payload(46) }));
      expect(f).toMatchObject({ kind: 'rejected', httpStatus: 401 });
      expect(f.message).toBe(`Trigger.dev trigger: ${PREVIEW_KEY_REFUSED}`);
      expect(preview.triggers().at(-1)!.headers['x-trigger-branch']).toBeUndefined();
    } finally {
      await preview.stop();
    }
  });

  it('maps a 429 to rejected with the reset time from x-ratelimit-reset', async () => {
    const resetAt = Date.now() + 30_000;
    fake.rateLimit(1, resetAt);
    const f = expectFailure(await adapter.invoke({ runtime, target: 'agent-task', payload: payload(45) }));
    expect(f).toMatchObject({ kind: 'rejected', httpStatus: 429, retryable: true });
    expect(f.retryAt?.getTime()).toBe(resetAt);
  });

  it('does not stream', async () => {
    expect(expectFailure(await adapter.invokeStream({ runtime, target: 'agent-task', payload: payload(1) })).kind).toBe('not_supported');
  });
});

describe('issue 36 items 2 and 5: a lost trigger answer, a 429, a reused key', () => {
  // Short enough for a test; TRIGGER_ANSWER_WINDOW_MS (20 s) in the service.
  const quick = new TriggerDevAdapter({ http, outbound, answerWindowMs: 1_500 });
  const tagOf = (runId: number): string => `ars_run:${runId}`;

  it.each(['reset', 'bad-gateway'] as const)('an answer lost after the run was created (%s): repeated with the same key, the same run comes back', async (how) => {
    fake.loseTriggerAnswers(1, how);
    const before = fake.triggers().length;
    const id = expectOk(await adapter.invoke({ runtime, target: 'agent-task', payload: payload(500) })).externalRunId;
    expect(fake.runsTagged(tagOf(500)).map((r) => r.id)).toEqual([id]);
    const sent = fake.triggers().slice(before);
    expect(sent).toHaveLength(2);
    expect(sent.map((r) => (r.body as { options: { idempotencyKey: string } }).options.idempotencyKey)).toEqual(['500', '500']);
  });

  it('answers lost for the whole window: a failure that says the run may have started (never a plain failure)', async () => {
    fake.loseTriggerAnswers(20, 'bad-gateway');
    const f = expectFailure(await quick.invoke({ runtime, target: 'agent-task', payload: payload(501) }));
    expect(f).toMatchObject({ maybeStarted: true, httpStatus: 502 });
    expect(f.message).toMatch(/may have started the run/);
    expect(fake.runsTagged(tagOf(501))).toHaveLength(1); // Trigger.dev holds exactly one run
  });

  it('a connection that was never made created nothing: a plain failure at once, not repeated', async () => {
    const before = fake.triggers().length;
    const f = expectFailure(await quick.invoke({ runtime: { ...runtime, baseUrl: await unusedUrl() }, target: 'agent-task', payload: payload(502) }));
    expect(f).toMatchObject({ kind: 'unreachable', notSent: true });
    expect(f.maybeStarted).toBeUndefined();
    expect(fake.triggers().length).toBe(before);
  });

  it('a 429 whose x-ratelimit-reset (epoch ms) falls inside the window is waited for, then the run is created once', async () => {
    fake.rateLimit(1, Date.now() + 300);
    const id = expectOk(await quick.invoke({ runtime, target: 'agent-task', payload: payload(503) })).externalRunId;
    expect(fake.runsTagged(tagOf(503)).map((r) => r.id)).toEqual([id]);
  });

  it('a 429 whose reset is beyond the window fails at once with the reset time, having created nothing', async () => {
    const resetAt = Date.now() + 60_000;
    fake.rateLimit(1, resetAt);
    const t0 = Date.now();
    const f = expectFailure(await quick.invoke({ runtime, target: 'agent-task', payload: payload(504) }));
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(f).toMatchObject({ kind: 'rejected', httpStatus: 429 });
    expect(f.maybeStarted).toBeUndefined();
    expect(f.message).toContain(`until ${new Date(resetAt).toISOString()}`);
    expect(fake.runsTagged(tagOf(504))).toHaveLength(0);
  });

  it('item 5: after FAILED the same key starts a new run with the same tag; after COMPLETED or CANCELED it stays cached', async () => {
    const first = await triggered(505);
    fake.setRun(first, { status: 'FAILED', error: { message: 'boom' } });
    const second = await triggered(505);
    expect(second).not.toBe(first);
    expect(fake.runsTagged(tagOf(505)).map((r) => r.id)).toEqual([first, second]);
    for (const word of ['COMPLETED', 'CANCELED'] as const) {
      const id = await triggered(506 + (word === 'CANCELED' ? 1 : 0));
      fake.setRun(id, { status: word });
      expect(await triggered(506 + (word === 'CANCELED' ? 1 : 0))).toBe(id);
    }
  });

  it('item 5: a task that fails at once while its answer is lost runs again on the repeat; the adapter follows the new run', async () => {
    fake.registerTask('fails-fast', (run) => Object.assign(run, { status: 'FAILED', error: { message: 'no' } }));
    fake.loseTriggerAnswers(1, 'reset');
    const id = expectOk(await adapter.invoke({ runtime, target: 'fails-fast', payload: payload(508) })).externalRunId;
    const runs = fake.runsTagged(tagOf(508));
    expect(runs).toHaveLength(2);
    expect(id).toBe(runs[1]!.id);
  });

  it('item 4: findRun gives the runs list the run\'s creation window and prefers the newest run with the tag', async () => {
    const first = await triggered(509);
    fake.setRun(first, { status: 'FAILED', createdAt: new Date(Date.now() - 1000) });
    const second = await triggered(509);
    const createdAt = new Date(Date.now() - 5_000);
    const found = expectOk(await adapter.findRun(runtime, 'agent-task', { runId: 509, deploymentId: '', createdAt }));
    expect(found?.externalRunId).toBe(second);
    const list = fake.requestsTo('/api/v1/runs', 'GET').at(-1)!;
    expect(list.query.get('filter[createdAt][from]')).toBe(String(createdAt.getTime() - 60_000));
    expect(list.query.get('filter[tag]')).toBe('ars_run:509');
  });

  it('item 4: a run older than the list\'s default 7 days is still found (the creation window is sent)', async () => {
    const id = await triggered(510);
    const created = new Date(Date.now() - 8 * 24 * 60 * 60_000);
    fake.setRun(id, { createdAt: created });
    const found = expectOk(await adapter.findRun(runtime, 'agent-task', { runId: 510, deploymentId: '', createdAt: created }));
    expect(found?.externalRunId).toBe(id);
  });
});

describe('Trigger.dev adapter: status', () => {
  const cases: Array<[TriggerStatus, string]> = [
    ['PENDING_VERSION', 'queued'], ['QUEUED', 'queued'], ['DELAYED', 'queued'],
    ['DEQUEUED', 'running'], ['EXECUTING', 'running'], ['WAITING', 'running'],
    ['COMPLETED', 'completed'], ['CANCELED', 'cancelled'],
    ['FAILED', 'failed'], ['CRASHED', 'failed'], ['SYSTEM_FAILURE', 'failed'], ['EXPIRED', 'failed'], ['TIMED_OUT', 'failed'],
  ];
  it.each(cases)('maps %s to %s from the status word alone', async (word, mapped) => {
    const id = await triggered(100 + cases.findIndex(([w]) => w === word));
    fake.setRun(id, { status: word });
    const s = expectOk(await adapter.fetchStatus(runtime, id));
    expect(s.status).toBe(mapped);
    expect(s.runtimeStatus).toBe(word);
    if (mapped === 'failed') expect(s.error).toBeTruthy();
  });

  it('sends the api version, so it sees WAITING where an unversioned client sees FROZEN', async () => {
    const id = await triggered(200);
    fake.setRun(id, { status: 'WAITING' });
    expect(expectOk(await adapter.fetchStatus(runtime, id)).runtimeStatus).toBe('WAITING');
    const legacy = await fetch(`${fake.url}/api/v3/runs/${id}`, { headers: { authorization: `Bearer ${fake.secretKey}` } });
    expect(((await legacy.json()) as { status: string }).status).toBe('FROZEN');
    expect(fake.requests.filter((r) => r.path.startsWith('/api/') && !r.headers['x-trigger-api-version'])).toHaveLength(1);
  });

  it('reads output only on COMPLETED and derives duration from startedAt/finishedAt, not durationMs', async () => {
    const id = await triggered(201);
    fake.setRun(id, { status: 'EXECUTING', output: { partial: true } });
    expect(expectOk(await adapter.fetchStatus(runtime, id)).output).toBeNull();
    const startedAt = new Date('2026-01-01T10:00:00Z');
    const finishedAt = new Date('2026-01-01T10:00:05Z');
    fake.setRun(id, { status: 'COMPLETED', output: { answer: 1, outputs: 3 }, startedAt, finishedAt, durationMs: 17 });
    const s = expectOk(await adapter.fetchStatus(runtime, id));
    expect(s).toMatchObject({ status: 'completed', output: { answer: 1, outputs: 3 }, error: null, startedAt, finishedAt, durationMs: 5000 });
  });

  it('issue 36 item 1: an output packet of 128 KiB or more comes presigned as superjson {json, meta}; the value is its json part', async () => {
    const id = await triggered(207);
    // Exactly at the limit: superjson's packet `{"json":{…}}` is 128 KiB, so it is offloaded (>=).
    const value = { outputs: 3, blob: '' };
    value.blob = 'y'.repeat(128 * 1024 - Buffer.byteLength(JSON.stringify({ json: value })));
    fake.completeRun(id, value);
    fake.setRun(id, { outputMeta: { values: { at: ['Date'] } } });
    const s = expectOk(await adapter.fetchStatus(runtime, id));
    expect(fake.requestsTo(`/presigned/output/${id}`)).toHaveLength(1);
    expect(s).toMatchObject({ status: 'completed', error: null });
    expect(s.output).toEqual(value);
  });

  it('issue 36 item 1: a string of 128 KiB or more comes presigned as text/plain: completed, stored as {value}', async () => {
    const id = await triggered(208);
    const text = 'z'.repeat(200 * 1024);
    fake.completeRun(id, text);
    const s = expectOk(await adapter.fetchStatus(runtime, id));
    expect(fake.requestsTo(`/presigned/output/${id}`)).toHaveLength(1);
    expect(s).toMatchObject({ status: 'completed', error: null, runtimeStatus: 'COMPLETED' });
    expect(s.output).toEqual({ value: text });
  });

  it.each([
    ['a string', 'done'],
    ['a number', 42],
    ['a boolean', false],
    ['an array', [1, { a: 2 }]],
  ])('issue 36 (decisions.md "Task return values"): an inline return value that is %s is stored as {value}', async (_label, value) => {
    const id = await triggered(209);
    fake.completeRun(id, value);
    expect(expectOk(await adapter.fetchStatus(runtime, id)).output).toEqual({ value });
  });

  it('issue 36: a task that returns nothing has output null', async () => {
    const id = await triggered(215);
    fake.setRun(id, { status: 'COMPLETED', startedAt: new Date(), finishedAt: new Date() });
    expect(expectOk(await adapter.fetchStatus(runtime, id))).toMatchObject({ status: 'completed', output: null });
  });

  it('fetches an offloaded output from the presigned URL, without the secret key', async () => {
    const id = await triggered(202);
    const big = { blob: 'x'.repeat(600 * 1024) };
    fake.completeRun(id, big);
    const s = expectOk(await adapter.fetchStatus(runtime, id));
    expect(s.output).toEqual(big);
    const download = fake.requestsTo('/presigned/output/').at(-1)!;
    expect(download.headers.authorization).toBeUndefined();
  });

  it('reports which task the run ran (taskIdentifier), the owner the service checks (issue 12)', async () => {
    const id = await triggered(206);
    expect(expectOk(await adapter.fetchStatus(runtime, id)).owner).toEqual({ taskIdentifier: 'agent-task' });
  });

  it('passes the task error message through on FAILED', async () => {
    const id = await triggered(203);
    fake.setRun(id, { status: 'FAILED', error: { message: 'boom', name: 'Error' } });
    expect(expectOk(await adapter.fetchStatus(runtime, id)).error).toBe('boom');
  });

  it('issue 36 item 3: a 404 is `notFound` whatever its x-should-retry (every 404 of the route carries it); the caller decides', async () => {
    fake.setReplicaLag(1);
    const id = await triggered(204);
    fake.setReplicaLag(0);
    expect(expectFailure(await adapter.fetchStatus(runtime, id))).toMatchObject({ kind: 'rejected', httpStatus: 404, notFound: true, retryable: false });
    expect(expectOk(await adapter.fetchStatus(runtime, id)).status).toBe('queued');
    expect(expectFailure(await adapter.fetchStatus(runtime, 'run_missing'))).toMatchObject({ kind: 'rejected', httpStatus: 404, notFound: true });
    expect(fake.requestsTo('/api/v3/runs/run_missing').length).toBe(1);
  });
});

describe('Trigger.dev adapter: the presigned output URL is fetched through the SSRF guard only (issue 12 finding 2)', () => {
  afterEach(() => {
    fake.presignedOrigin = null;
  });

  async function completedWithBigOutput(runId: number, bytes = 600 * 1024): Promise<string> {
    const id = await triggered(runId);
    fake.completeRun(id, { blob: 'x'.repeat(bytes) });
    return id;
  }

  it.each([
    ['a loopback address over https', 'https://127.0.0.1:8443', /not public/],
    ['a private address', 'https://10.20.30.40', /not public/],
    ['the cloud metadata address (link-local)', 'https://169.254.169.254', /not public/],
    ['IPv6 loopback', 'https://[::1]:8443', /not public/],
    ['a name that resolves to loopback', 'https://localhost:8443', /not public/],
    ['plain http to a public host', 'http://objects.example.com', /not https/],
  ])('%s: never fetched; the run is reported failed with the reason', async (_label, origin, reason) => {
    const id = await completedWithBigOutput(210);
    fake.presignedOrigin = origin;
    const before = fake.requestsTo('/presigned/output/').length;
    // The production default: nothing on ARS_OUTBOUND_ALLOW_HOSTS.
    const strict = createOutboundClient({ allowHosts: [] });
    const s = expectOk(await new TriggerDevAdapter({ http, outbound: strict }).fetchStatus(runtime, id));
    await strict.close();
    expect(s).toMatchObject({ status: 'failed', output: null, runtimeStatus: 'COMPLETED', owner: { taskIdentifier: 'agent-task' } });
    expect(s.error).toMatch(/^the task's output could not be fetched: /);
    expect(s.error).toMatch(reason);
    expect(fake.requestsTo('/presigned/output/')).toHaveLength(before);
  });

  it('plain http to the fake itself is refused without the operator allow-list', async () => {
    const strict = createOutboundClient({ allowHosts: [] });
    try {
      const id = await completedWithBigOutput(211);
      const s = expectOk(await new TriggerDevAdapter({ http, outbound: strict }).fetchStatus(runtime, id));
      expect(s).toMatchObject({ status: 'failed', output: null });
      expect(s.error).toMatch(/not https/);
      expect(fake.requestsTo(`/presigned/output/${id}`)).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('an output over the size cap (maxJsonBytes) is refused, not read on', async () => {
    const id = await completedWithBigOutput(212, 3 * 1024 * 1024);
    const s = expectOk(await adapter.fetchStatus(runtime, id));
    expect(s).toMatchObject({ status: 'failed', output: null });
    expect(s.error).toMatch(/larger than 2097152 bytes/);
  });

  it('without a guarded client the presigned URL is never fetched', async () => {
    const id = await completedWithBigOutput(213);
    const s = expectOk(await new TriggerDevAdapter({ http }).fetchStatus(runtime, id));
    expect(s).toMatchObject({ status: 'failed', output: null });
    expect(fake.requestsTo(`/presigned/output/${id}`)).toHaveLength(0);
  });

  it('an expired signature (403) is transient: the next poll reads the run again, with a fresh URL', async () => {
    const id = await completedWithBigOutput(214);
    fake.setFault({ kind: 'garbage', status: 403, contentType: 'application/xml', body: '<Error><Code>AccessDenied</Code></Error>' }, { path: '/presigned/', times: 1 });
    expect(expectFailure(await adapter.fetchStatus(runtime, id))).toMatchObject({ kind: 'unreachable', retryable: true, httpStatus: 403 });
    expect(expectOk(await adapter.fetchStatus(runtime, id)).status).toBe('completed');
  });

});

describe('Trigger.dev adapter: cancel, waitpoints, logs', () => {
  it('cancels, and a second cancel of the finished run is still ok', async () => {
    const id = await triggered(300);
    expectOk(await adapter.cancel(runtime, id));
    expect(fake.run(id).status).toBe('CANCELED');
    fake.setRun(id, { status: 'COMPLETED' });
    expectOk(await adapter.cancel(runtime, id));
    expect(fake.run(id).status).toBe('COMPLETED');
    expect(fake.requestsTo(`/api/v2/runs/${id}/cancel`, 'POST')).toHaveLength(2);
  });

  it('inspects and completes a token with the payload under `data`', async () => {
    const token = fake.createWaitpointToken();
    expect(expectOk(await adapter.inspectWaitpoint(runtime, token.id)).status).toBe('WAITING');
    expectOk(await adapter.completeWaitpoint(runtime, token.id, { approved: true }));
    expect(fake.requestsTo(`/api/v1/waitpoints/tokens/${token.id}/complete`).at(-1)!.body).toEqual({ data: { approved: true } });
    expect(fake.token(token.id)).toMatchObject({ status: 'COMPLETED', data: { approved: true } });
    expect(expectOk(await adapter.inspectWaitpoint(runtime, token.id)).status).toBe('COMPLETED');
    // Trigger.dev still says success (⚠): the route must inspect first.
    expectOk(await adapter.completeWaitpoint(runtime, token.id, { approved: false }));
    expect(fake.token(token.id).data).toEqual({ approved: true });
    const timedOut = fake.createWaitpointToken('TIMED_OUT');
    expect(expectOk(await adapter.inspectWaitpoint(runtime, timedOut.id)).status).toBe('TIMED_OUT');
  });

  it('normalises run events into log entries', async () => {
    const id = await triggered(301);
    fake.addEvents(id, [
      { message: 'Attempt 1', level: 'TRACE', startTime: '1767261600000000000', duration: 2_500_000_000, isError: false },
      { message: 'Error: boom', level: 'ERROR', startTime: '2026-01-01T10:00:03.000Z', duration: 0, isError: true },
    ]);
    expect(expectOk(await adapter.fetchLogs(runtime, id))).toEqual([
      { time: '2026-01-01T10:00:00.000Z', level: 'trace', message: 'Attempt 1', isError: false, durationMs: 2500 },
      { time: '2026-01-01T10:00:03.000Z', level: 'error', message: 'Error: boom', isError: true, durationMs: 0 },
    ]);
  });
});

describe('Trigger.dev adapter: a misbehaving runtime', () => {
  it('reports an unreachable runtime quickly', async () => {
    const t0 = Date.now();
    const f = expectFailure(await adapter.invoke({ runtime: { ...runtime, baseUrl: await unusedUrl() }, target: 'agent-task', payload: payload(1) }));
    expect(f).toMatchObject({ kind: 'unreachable', retryable: true });
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('reports a reset connection as unreachable', async () => {
    fake.setFault({ kind: 'down' });
    expect(expectFailure(await adapter.fetchStatus(runtime, 'run_x')).kind).toBe('unreachable');
  });

  it('reports an HTML page or non-HTTP bytes as bad_response', async () => {
    fake.setFault({ kind: 'garbage' }, { times: 1 });
    expect(expectFailure(await adapter.invoke({ runtime, target: 'agent-task', payload: payload(400) })).kind).toBe('bad_response');
    fake.setFault({ kind: 'not-http' }, { times: 1 });
    expect(expectFailure(await adapter.fetchStatus(runtime, 'run_x')).kind).toBe('bad_response');
    fake.setFault({ kind: 'garbage', status: 502 }, { times: 1 });
    expect(expectFailure(await adapter.fetchStatus(runtime, 'run_x'))).toMatchObject({ kind: 'unreachable', httpStatus: 502 });
  });

  it('an API answer over maxJsonBytes is a bad response, not read into memory whole', async () => {
    fake.setFault({ kind: 'garbage', status: 200, contentType: 'application/json', body: `"${'x'.repeat(3 * 1024 * 1024)}"` }, { times: 1 });
    const failure = expectFailure(await adapter.fetchStatus(runtime, 'run_x'));
    expect(failure).toMatchObject({ kind: 'bad_response' });
    expect(failure.message).toMatch(/answer larger than 2097152 bytes/);
    // The client is usable right after: the oversized body was dropped, not left half-read on a pooled socket.
    fake.setFault({ kind: 'garbage', status: 502 }, { times: 1 });
    expect(expectFailure(await adapter.fetchStatus(runtime, 'run_x'))).toMatchObject({ kind: 'unreachable', httpStatus: 502 });
  });

  it('bounds a runtime that never answers by the configured timeouts', async () => {
    fake.setFault({ kind: 'hang' }, { times: 1 });
    const t0 = Date.now();
    expect(expectFailure(await adapter.fetchStatus(runtime, 'run_x')).kind).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('bounds a runtime that trickles its answer (never idle) by the whole-call ceiling, headers + body timeouts', async () => {
    fake.setFault({ kind: 'trickle', everyMs: 50 }, { times: 1 });
    const t0 = Date.now();
    const failure = expectFailure(await adapter.fetchStatus(runtime, 'run_x'));
    expect(failure).toMatchObject({ kind: 'timeout', retryable: true });
    expect(failure.message).toMatch(/no complete answer within 800 ms/);
    // Stopped at the first byte after the 800 ms ceiling, not left to trickle on.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(800);
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
