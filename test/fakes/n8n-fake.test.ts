// The n8n fake against what a real n8n answered (test/fakes/n8n-captures/, README there): the public API routes
// recovery uses have the captured keys and types at the paths the service reads, for 2.8.4 and 2.41.1 alike.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { N8nFake, n8nAnswers, type N8nVersion } from './n8n-fake.ts';

interface Capture { status: number; body: unknown; request: { path: string } }
/** A capture file: `{request, status, headers, body}`, or a hand-assembled record (cursor-decoded, disconnect, long-wait-*). */
const captured = <T = Capture>(v: N8nVersion, name: string): T =>
  JSON.parse(readFileSync(new URL(`./n8n-captures/${v}/${name}.json`, import.meta.url), 'utf8')) as T;

type Json = Record<string, unknown>;
/** `a.b[0].c` style path into a JSON value. */
function at(v: unknown, path: string): unknown {
  return path.split(/\.|(?=\[)/).filter(Boolean).reduce<unknown>((cur, part) => {
    if (cur === null || cur === undefined) return undefined;
    const i = /^\[(\d+)\]$/.exec(part);
    return i ? (cur as unknown[])[Number(i[1])] : (cur as Json)[part];
  }, v);
}
const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const keys = (v: unknown): string[] => Object.keys(v as Json).sort();
/** Same keys at `path`, and the same JSON type under each of them. */
function sameShape(fake: unknown, real: unknown, path = ''): void {
  const f = path ? at(fake, path) : fake;
  const r = path ? at(real, path) : real;
  expect(keys(f), `keys at ${path || '(top)'}`).toEqual(keys(r));
  for (const k of keys(r)) expect(kind((f as Json)[k]), `${path}.${k}`).toBe(kind((r as Json)[k]));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const decode = (cursor: unknown) => JSON.parse(Buffer.from(String(cursor), 'base64').toString()) as Json;
const AUTH_CASES = ['no key', 'wrong key'];

describe.each(['2.8.4', '2.41.1'] as const)('n8n fake as n8n %s', (version) => {
  const fake = new N8nFake({ version, apiKey: 'n8n_fixed' });
  const real = (name: string) => captured(version, name);
  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${fake.url}/api/v1${path}`, { ...init, headers: { 'x-n8n-api-key': 'n8n_fixed', ...init.headers } });
    return { status: res.status, body: (await res.json()) as Json & { data: Json[]; nextCursor: string | null } };
  };
  const post = (path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${fake.url}/webhook/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  let gate = Promise.resolve();
  let release = (): void => {};
  /** The probe workflow answers once the test releases it: a "Wait node" the test controls. */
  const hold = () => { gate = new Promise((r) => (release = r)); };
  const newest = () => [...fake.executions.values()].at(-1)!;

  beforeAll(async () => {
    await fake.start();
    fake.registerWorkflow('ars-recovery-probe', async (ctx) => {
      await gate;
      return { json: { answer: 42, echo: (ctx.body as Json).runId }, executionIdHeader: true };
    }, { id: 'ArsRecoveryProbe', name: 'ARS recovery probe' });
    fake.registerWorkflow('ars-recovery-probe-error', version === '2.8.4' ? n8nAnswers.emptyOk() : n8nAnswers.errorInWorkflow(), { id: 'ArsRecoveryError' });
  });
  afterAll(() => fake.stop());

  it.each(AUTH_CASES)('answers 401 with the real body (%s)', async (which) => {
    const headers: Record<string, string> = which === 'no key' ? {} : { 'x-n8n-api-key': 'not-a-key' };
    for (const path of ['/api/v1/workflows', '/api/v1/executions', '/api/v1/executions/1']) {
      const res = await fetch(`${fake.url}${path}`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(real(which === 'no key' ? 'auth-none' : 'auth-bad').body);
    }
  });

  it('lists one published workflow per webhook path, Webhook node carrying path and POST, paginated by offset', async () => {
    const list = await api('/workflows');
    const item = list.body.data.find((w) => w.id === 'ArsRecoveryProbe')!;
    const realList = real('workflows-list').body as { data: Json[] };
    const realItem = realList.data.find((w) => w.id === 'ArsRecoveryProbe')!;
    sameShape(item, realItem);
    sameShape(item, realItem, 'activeVersion');
    for (const where of ['nodes', 'activeVersion.nodes']) {
      const hook = (at(item, where) as Json[]).find((n) => n.type === 'n8n-nodes-base.webhook')!;
      const realHook = (at(realItem, where) as Json[]).find((n) => n.type === 'n8n-nodes-base.webhook')!;
      expect(keys(hook)).toEqual(keys(realHook));
      expect(hook.parameters).toMatchObject({ httpMethod: 'POST', path: 'ars-recovery-probe', responseMode: 'responseNode' });
      expect(typeof hook.webhookId).toBe('string');
    }
    expect(item).toMatchObject({ active: true, name: 'ARS recovery probe' });
    expect(list.body.nextCursor).toBeNull();

    const page1 = await api('/workflows?limit=1');
    expect(page1.body.data).toHaveLength(1);
    expect(decode(page1.body.nextCursor)).toEqual(captured<{ decoded: Json }>(version, 'workflows-cursor-decoded').decoded); // {limit:1, offset:1}
    const page2 = await api(`/workflows?cursor=${encodeURIComponent(page1.body.nextCursor!)}`);
    expect(page2.body.data.map((w) => w.id)).not.toContain(page1.body.data[0]!.id);
    expect(page2.body.nextCursor).toBeNull();
    expect((await api('/workflows?active=false')).body.data).toEqual([]);
    const over = await api('/workflows?limit=251');
    expect(over.status).toBe(real('workflows-limit-251').status);
    if (over.status === 400) expect(over.body).toEqual(real('workflows-limit-251').body);
  });

  it('leaves a running execution out of the list unless status=running; its record holds the request, not yet the runData', async () => {
    hold();
    const runId = 424242;
    const answer = post('ars-recovery-probe', { runId, input: { q: 1 }, credentialsToken: 'jwt' });
    await vi.waitFor(() => expect(newest()?.workflowPath).toBe('ars-recovery-probe'));
    const ex = newest();

    const plain = await api('/executions?workflowId=ArsRecoveryProbe&includeData=true&limit=5');
    expect(plain.body.data.map((e) => e.id)).not.toContain(ex.id);
    const realPlain = real('running-list-no-status').body as { data: Json[] };
    expect(realPlain.data.map((e) => e.status)).not.toContain('running'); // what the trap is based on
    const running = await api('/executions?workflowId=ArsRecoveryProbe&status=running&includeData=true&limit=5');
    expect(running.body.data.map((e) => e.id)).toEqual([ex.id]);
    sameShape(running.body.data[0], (real('running-list-status-running').body as { data: Json[] }).data[0]);

    const one = await api(`/executions/${ex.id}?includeData=true`);
    const realOne = real('running-get-includeData').body;
    sameShape(one.body, realOne);
    sameShape(one.body, realOne, 'data');
    sameShape(one.body, realOne, 'data.resultData');
    expect(at(one.body, 'data.resultData.runData')).toEqual({});
    const stackItem = 'data.executionData.nodeExecutionStack[0].data.main[0][0].json';
    sameShape(one.body, realOne, stackItem);
    expect(at(one.body, `${stackItem}.body`)).toEqual({ runId, input: { q: 1 }, credentialsToken: 'jwt' });
    expect(at(one.body, 'data.executionData.nodeExecutionStack[0].node.parameters')).toMatchObject({ path: 'ars-recovery-probe', httpMethod: 'POST' });
    expect(one.body).toMatchObject({ id: ex.id, status: 'running', finished: false, stoppedAt: null, workflowId: 'ArsRecoveryProbe' });
    sameShape((await api(`/executions/${ex.id}`)).body, real('running-get').body);

    release();
    const res = await answer;
    expect(res.headers.get('x-n8n-execution-id')).toBe(ex.id);
    const done = await api(`/executions/${ex.id}?includeData=true`);
    const realDone = real('finished-get-includeData').body;
    sameShape(done.body, realDone);
    sameShape(done.body, realDone, 'data.resultData');
    const hookItem = 'data.resultData.runData.Webhook[0].data.main[0][0]';
    sameShape(done.body, realDone, hookItem);
    sameShape(done.body, realDone, `${hookItem}.json`);
    expect(at(done.body, `${hookItem}.json.body`)).toEqual({ runId, input: { q: 1 }, credentialsToken: 'jwt' });
    expect(at(done.body, `${hookItem}.json.executionMode`)).toBe('production');
    expect(at(done.body, 'data.resultData.lastNodeExecuted')).toBe(at(realDone, 'data.resultData.lastNodeExecuted'));
    expect(at(done.body, 'data.resultData.runData.Respond to Webhook[0].data.main[0][0].json')).toEqual({ answer: 42, echo: runId });
    expect(done.body).toMatchObject({ status: 'success', finished: true });

    const listed = await api('/executions?workflowId=ArsRecoveryProbe&includeData=true&limit=5');
    expect(listed.body.data[0]!.id).toBe(ex.id);
    sameShape(listed.body.data[0], (real('finished-list-includeData').body as { data: Json[] }).data[0]);
    sameShape((await api('/executions?workflowId=ArsRecoveryProbe&limit=5')).body.data[0], (real('finished-list').body as { data: Json[] }).data[0]);
  });

  it('runs an execution to its end when the webhook caller hangs up', async () => {
    hold();
    await expect(post('ars-recovery-probe', { runId: 7 }, AbortSignal.timeout(100))).rejects.toThrow();
    const ex = newest();
    await vi.waitFor(() => expect(ex.clientGone).toBe(true));
    expect(captured<{ after: { body: Json } }>(version, 'disconnect-get-includeData').after.body.status).toBe('success');
    release();
    await vi.waitFor(async () => expect((await api(`/executions/${ex.id}`)).body.status).toBe('success'));
    expect((await api('/executions?workflowId=ArsRecoveryProbe&status=success&limit=1')).body.data[0]!.id).toBe(ex.id);
  });

  it('lets a service in another process die mid-call and the execution still finish', async () => {
    hold();
    const child = spawn(process.execPath, ['-e', `fetch(${JSON.stringify(`${fake.url}/webhook/ars-recovery-probe`)}, { method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ runId: 99 }) }); setInterval(() => {}, 1000);`], { stdio: 'ignore' });
    // A fresh node process: its start-up alone can take seconds on a loaded CI machine (vi.waitFor's default is 1 s).
    await vi.waitFor(() => expect((newest().webhookItem?.body as Json | undefined)?.runId).toBe(99), { timeout: 15_000 });
    const ex = newest();
    child.kill('SIGKILL');
    await vi.waitFor(() => expect(ex.clientGone).toBe(true), { timeout: 5_000 });
    release();
    const found = await vi.waitFor(async () => {
      const list = await api('/executions?workflowId=ArsRecoveryProbe&includeData=true&limit=5');
      const hit = list.body.data.find((e) => at(e, 'data.resultData.runData.Webhook[0].data.main[0][0].json.body.runId') === 99);
      if (!hit) throw new Error('not listed yet');
      return hit;
    });
    expect(found).toMatchObject({ id: ex.id, status: 'success' });
  });

  it('pages executions newest first through nextCursor {lastId, limit} until null', async () => {
    for (let i = 0; i < 3; i++) await post('ars-recovery-probe', { runId: 1000 + i });
    const all = (await api('/executions?workflowId=ArsRecoveryProbe&limit=250')).body.data.map((e) => Number(e.id));
    expect(all).toEqual([...all].sort((a, b) => b - a));
    const seen: number[] = [];
    let cursor: string | null = null;
    let first = true;
    do {
      const page = await api(`/executions?workflowId=ArsRecoveryProbe&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.body.data.map((e) => Number(e.id)));
      cursor = page.body.nextCursor;
      if (cursor) expect(decode(cursor)).toEqual({ lastId: String(seen.at(-1)), limit: 2 });
      if (first) expect(keys(decode(cursor))).toEqual(keys(captured<{ decoded: Json }>(version, 'executions-cursor-decoded').decoded));
      first = false;
    } while (cursor);
    expect(seen).toEqual(all);
    expect((await api('/executions?workflowId=ArsRecoveryProbe&limit=0')).body).toMatchObject({ nextCursor: null });
    expect((await api('/executions?workflowId=ArsRecoveryProbe&limit=0')).body.data).toHaveLength(all.length);
    expect((await api('/executions?workflowId=NoSuchWorkflow00')).body).toEqual(real('executions-unknown-workflow').body);
  });

  it('answers bad list queries like the real one: limit above 250, a bad cursor or status, startedAfter', async () => {
    for (const [query, name] of [['limit=251', 'executions-limit-251'], ['limit=abc', 'executions-limit-nan'], ['cursor=not-base64-json', 'executions-bad-cursor'],
      ['status=bogus', 'executions-bad-status'], ['status=crashed&limit=1', 'executions-status-crashed']] as const) {
      const res = await api(`/executions?${query}`);
      expect(res.status, query).toBe(real(name).status);
      if (res.status === 400) expect(res.body, query).toEqual(real(name).body);
    }
    const since = new Date(Date.now() - 60_000).toISOString();
    const res = await api(`/executions?workflowId=ArsRecoveryProbe&startedAfter=${encodeURIComponent(since)}&limit=2`);
    expect(res.status).toBe(real('executions-started-after').status);
    if (res.status === 400) expect(res.body).toEqual(real('executions-started-after').body);
    else expect((await api(`/executions?workflowId=ArsRecoveryProbe&startedAfter=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.data).toEqual([]);
    expect(await api('/executions/99999999')).toEqual({ status: 404, body: real('executions-get-404').body });
  });

  it('lists an execution parked waiting in memory only on 2.41.1 (2.8.4 shows it in no list)', async () => {
    fake.registerWorkflow('wait-for-human', async (ctx) => ({ json: { decision: await ctx.waitForResume() } }));
    post('wait-for-human', { runId: 5 }).catch(() => undefined);
    await vi.waitFor(() => expect(newest().status).toBe('waiting'));
    const ex = newest();
    const ids = async (q: string) => (await api(`/executions?workflowId=${ex.workflowId}${q}`)).body.data.map((e) => e.id);
    const visible = version === '2.41.1';
    expect(await ids('')).toEqual(visible ? [ex.id] : []);
    expect(await ids('&status=waiting')).toEqual(visible ? [ex.id] : []);
    const realWaiting = (real('long-wait-list-status-waiting').body as { data: Json[] }).data;
    expect(realWaiting.length > 0).toBe(visible);
    expect((await api(`/executions/${ex.id}`)).body).toMatchObject({ status: 'waiting', finished: false });
    await fetch(fake.resumeUrl(ex.id), { method: 'POST', body: '{}' });
    await vi.waitFor(async () => expect(await ids('')).toEqual([ex.id]));
  });

  it('stops like the real one: 200 {mode,startedAt,stoppedAt,finished,status} then 409 on 2.41.1, 404 on 2.8.4', async () => {
    fake.registerWorkflow('forever', n8nAnswers.never());
    const held = post('forever', { runId: 6 });
    held.catch(() => undefined); // 2.8.4 cannot stop it: the call is cut when the fake stops
    await vi.waitFor(() => expect(newest().workflowPath).toBe('forever'));
    const ex = newest();
    const first = await api(`/executions/${ex.id}/stop`, { method: 'POST' });
    expect(first.status).toBe(real('stop-first').status);
    if (version === '2.8.4') {
      expect(first.body).toEqual(real('stop-first').body);
      expect(await api('/executions/99999999/stop', { method: 'POST' })).toEqual({ status: 404, body: real('stop-unknown-id').body });
      return;
    }
    sameShape(first.body, real('stop-first').body);
    expect(first.body.status).toBe('canceled');
    const res = await held;
    expect([res.status, await res.json()]).toEqual([500, real('stop-held-call-answer').body]);
    const second = await api(`/executions/${ex.id}/stop`, { method: 'POST' });
    expect(second.status).toBe(409);
    expect(second.body.message).toBe(String((real('stop-second').body as Json).message).replace(/\d+/, ex.id));
    expect(await api('/executions/99999999/stop', { method: 'POST' })).toEqual({ status: 404, body: real('stop-unknown-id').body });
  });

  it('resets startedAt when a waiting execution resumes on 2.8.4 only (createdAt keeps the start)', async () => {
    const realAfter = real('long-wait-get-after').body as Json;
    const moved = Date.parse(String(realAfter.startedAt)) - Date.parse(String(realAfter.createdAt)) > 60_000; // a 70 s Wait
    expect(moved).toBe(version === '2.8.4');
    fake.registerWorkflow('wait-again', async (ctx) => ({ json: { decision: await ctx.waitForResume() } }));
    post('wait-again', {}).catch(() => undefined);
    await vi.waitFor(() => expect(newest().status).toBe('waiting'));
    const ex = newest();
    const started = ex.startedAt.getTime();
    await sleep(5);
    await fetch(fake.resumeUrl(ex.id), { method: 'POST', body: '{}' });
    await vi.waitFor(() => expect(ex.status).toBe('success'));
    expect(ex.startedAt.getTime() > started).toBe(moved);
    expect(ex.createdAt.getTime()).toBe(started);
    expect((await api(`/executions/${ex.id}`)).body.createdAt).toBe(new Date(started).toISOString());
  });
});
