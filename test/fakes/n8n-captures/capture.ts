// Captures what a REAL n8n answers to the requests the service's recovery makes (see README.md here).
//   N8N_URL=… N8N_API_KEY=… N8N_VERSION=2.8.4 npx tsx test/fakes/n8n-captures/capture.ts
// The n8n must run the workflows of examples/n8n (ids ArsRecoveryProbe, ArsRecoveryError). Writes
// test/fakes/n8n-captures/<version>/<name>.json: { request, status, headers, body }. The API key is never written.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = (process.env.N8N_URL ?? '').replace(/\/$/, '');
const key = process.env.N8N_API_KEY ?? '';
const version = process.env.N8N_VERSION ?? '';
if (!base || !key || !version) throw new Error('N8N_URL, N8N_API_KEY and N8N_VERSION are required');
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), version);
mkdirSync(out, { recursive: true });

const PROBE = 'ArsRecoveryProbe';
const ERROR = 'ArsRecoveryError';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEPT_HEADERS = ['content-type', 'content-length', 'transfer-encoding', 'x-n8n-execution-id', 'content-security-policy'];

interface Captured { request: { method: string; path: string; apiKey?: string }; status: number; headers: Record<string, string>; body: unknown }

function scrub<T>(v: T): T {
  // The API key, and the per-execution resume token of 2.41.1 (it authorises resuming a waiting execution).
  const text = JSON.stringify(v).split(key).join('<api-key>').replace(/"resumeToken":"[0-9a-f]+"/g, '"resumeToken":"<resume-token>"');
  return JSON.parse(text) as T;
}

async function call(method: string, p: string, opts: { auth?: 'good' | 'none' | 'bad'; json?: unknown; signal?: AbortSignal } = {}): Promise<Captured> {
  const auth = opts.auth ?? 'good';
  const headers: Record<string, string> = {};
  if (auth === 'good') headers['x-n8n-api-key'] = key;
  if (auth === 'bad') headers['x-n8n-api-key'] = 'not-a-key';
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${p}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json), signal: opts.signal });
  const text = await res.text();
  let body: unknown = text;
  try { body = text ? JSON.parse(text) : ''; } catch { /* keep the text */ }
  const kept = Object.fromEntries(KEPT_HEADERS.flatMap((h) => (res.headers.get(h) === null ? [] : [[h, res.headers.get(h)!]])));
  return scrub({ request: { method, path: p, ...(auth === 'good' ? {} : { apiKey: auth }) }, status: res.status, headers: kept, body });
}

function save(name: string, c: Captured | Record<string, unknown>): void {
  writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify(c, null, 2)}\n`);
  const status = (c as Captured).status;
  console.log(`${version} ${name}${status ? ` ${status}` : ''}`);
}

const api = (p: string, opts?: Parameters<typeof call>[2]) => call('GET', `/api/v1${p}`, opts);
const bodyOf = (c: Captured) => c.body as { data: Array<{ id: string; status: string }>; nextCursor: string | null };

/** POSTs the webhook; resolves with the answer (never rejects). */
function webhook(p: string, json: unknown, signal?: AbortSignal): Promise<Captured | { aborted: true }> {
  return call('POST', `/webhook/${p}`, { auth: 'none', json, signal }).catch(() => ({ aborted: true as const }));
}

/**
 * The newest execution id of a workflow. The list hides executions held in memory (status=running shows the
 * running ones; a `waiting` one held in memory is in no list on 2.8.4), so the ids after the newest listed one
 * are also asked for one by one (ids are one sequence across workflows).
 */
async function newestId(workflowId: string): Promise<number> {
  const all = await Promise.all(['', '&status=running'].map((s) => api(`/executions?workflowId=${workflowId}&limit=1${s}`)));
  const listed = Math.max(0, ...all.flatMap((c) => bodyOf(c).data.map((e) => Number(e.id))));
  let newest = listed;
  for (let id = listed + 1; id <= listed + 5; id++) {
    const c = await api(`/executions/${id}`);
    if (c.status === 200 && (c.body as { workflowId?: string }).workflowId === workflowId) newest = id;
  }
  return newest;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

if (process.argv.includes('--long-wait')) {
  // A Wait of 65 s or more parks the execution in the database as `waiting` and drops it from memory.
  const lwBefore = await newestId(PROBE);
  const t0 = Date.now();
  const lwHeld = webhook('ars-recovery-probe', { runId: Date.now(), input: {}, waitSeconds: 70 });
  const lwId = await waitFor('the long-wait execution', async () => { const n = await newestId(PROBE); return n > lwBefore ? n : undefined; });
  await sleep(3000);
  save('long-wait-list-no-status', await api(`/executions?workflowId=${PROBE}&limit=2`));
  save('long-wait-list-status-waiting', await api(`/executions?workflowId=${PROBE}&status=waiting&limit=2`));
  save('long-wait-get-includeData', await api(`/executions/${lwId}?includeData=true`));
  const answer = await lwHeld;
  save('long-wait-held-call-answer', { afterMs: Date.now() - t0, answer });
  await sleep(1000);
  save('long-wait-get-after', await api(`/executions/${lwId}`));
  console.log('done');
  process.exit(0);
}

// ---------------------------------------------------------------- auth and workflows
save('auth-none', await api('/workflows', { auth: 'none' }));
save('auth-bad', await api('/workflows', { auth: 'bad' }));
save('workflows-list', await api('/workflows'));
const page1 = await api('/workflows?limit=1');
save('workflows-page1-limit1', page1);
const cursor1 = bodyOf(page1).nextCursor;
save('workflows-page2-cursor', await api(`/workflows?cursor=${encodeURIComponent(cursor1 ?? '')}`));
save('workflows-cursor-decoded', { nextCursor: cursor1, decoded: cursor1 ? JSON.parse(Buffer.from(cursor1, 'base64').toString()) : null });
const w251 = await api('/workflows?limit=251');
save('workflows-limit-251', { ...w251, body: w251.status === 200 ? { count: bodyOf(w251).data.length, nextCursor: bodyOf(w251).nextCursor } : w251.body });
save('workflows-active-true', await api('/workflows?active=true&limit=250'));

// ---------------------------------------------------------------- a finished execution, and one still running
const runId = Date.now();
const before = await newestId(PROBE);
const held = webhook('ars-recovery-probe', { runId, input: { q: 1 }, credentialsToken: 'jwt-not-a-secret', waitSeconds: 5 });
const runningId = await waitFor('the execution to exist', async () => { const n = await newestId(PROBE); return n > before ? n : undefined; });
await sleep(1000); // inside the 5 s Wait node
save('running-list-no-status', await api(`/executions?workflowId=${PROBE}&includeData=true&limit=5`));
save('running-list-status-running', await api(`/executions?workflowId=${PROBE}&status=running&includeData=true&limit=5`));
save('running-list-status-running-no-workflow', await api('/executions?status=running&limit=5'));
save('running-get-includeData', await api(`/executions/${runningId}?includeData=true`));
save('running-get', await api(`/executions/${runningId}`));
save('webhook-answer', await held as Captured);
await sleep(500);
save('finished-get-includeData', await api(`/executions/${runningId}?includeData=true`));
save('finished-get', await api(`/executions/${runningId}`));
save('finished-list-includeData', await api(`/executions?workflowId=${PROBE}&includeData=true&limit=5`));
save('finished-list', await api(`/executions?workflowId=${PROBE}&limit=5`));
save('finished-list-status-success', await api(`/executions?workflowId=${PROBE}&status=success&limit=5`));

// ---------------------------------------------------------------- an execution failing before its Respond node
const errBefore = await newestId(ERROR);
save('error-webhook-answer', await webhook('ars-recovery-probe-error', { runId: runId + 1, input: {}, waitSeconds: 0 }) as Captured);
const errorId = await waitFor('the error execution', async () => { const n = await newestId(ERROR); return n > errBefore ? n : undefined; });
await sleep(500);
save('error-get-includeData', await api(`/executions/${errorId}?includeData=true`));
save('error-list-status-error', await api(`/executions?workflowId=${ERROR}&status=error&limit=5`));

// ---------------------------------------------------------------- the caller hangs up mid-execution (curl --max-time 1)
const dcBefore = await newestId(PROBE);
const curl = await new Promise<string>((resolve) => {
  execFile('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', '--max-time', '1', '-X', 'POST', `${base}/webhook/ars-recovery-probe`,
    '-H', 'content-type: application/json', '-d', JSON.stringify({ runId: runId + 2, input: {}, waitSeconds: 5 })], (err, stdout) => resolve(`${stdout} exit=${err?.code ?? 0}`));
});
const dcId = await waitFor('the disconnected execution', async () => { const n = await newestId(PROBE); return n > dcBefore ? n : undefined; });
const dcRunning = await api(`/executions/${dcId}`);
await sleep(5500);
save('disconnect-get-includeData', { curl, whileRunning: dcRunning, after: await api(`/executions/${dcId}?includeData=true`) });

// ---------------------------------------------------------------- pagination and limits of the executions list
const exPage1 = await api(`/executions?workflowId=${PROBE}&limit=1`);
save('executions-page1-limit1', exPage1);
const c1 = bodyOf(exPage1).nextCursor;
save('executions-cursor-decoded', { nextCursor: c1, decoded: c1 ? JSON.parse(Buffer.from(c1, 'base64').toString()) : null });
save('executions-page2-cursor', await api(`/executions?workflowId=${PROBE}&cursor=${encodeURIComponent(c1 ?? '')}`));
save('executions-last-page', await api(`/executions?workflowId=${PROBE}&limit=250`));
save('executions-limit-250', { status: (await api('/executions?limit=250')).status });
const l251 = await api('/executions?limit=251');
save('executions-limit-251', { ...l251, body: l251.status === 200 ? { count: bodyOf(l251).data.length, nextCursor: bodyOf(l251).nextCursor } : l251.body });
save('executions-limit-0', await api(`/executions?workflowId=${PROBE}&limit=0`));
save('executions-started-after', await api(`/executions?workflowId=${PROBE}&startedAfter=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}&limit=2`));
save('executions-limit-nan', await api('/executions?limit=abc'));
save('executions-bad-cursor', await api('/executions?cursor=not-base64-json'));
save('executions-bad-status', await api('/executions?status=bogus'));
save('executions-status-crashed', await api('/executions?status=crashed&limit=1'));
save('executions-unknown-workflow', await api('/executions?workflowId=NoSuchWorkflow00'));
save('executions-get-404', await api('/executions/99999999'));
save('executions-auth-none', await api('/executions', { auth: 'none' }));

// ---------------------------------------------------------------- stop (2.41.1) or its absence (2.8.4)
const stBefore = await newestId(PROBE);
const stopped = webhook('ars-recovery-probe', { runId: runId + 3, input: {}, waitSeconds: 10 });
const stId = await waitFor('the execution to stop', async () => { const n = await newestId(PROBE); return n > stBefore ? n : undefined; });
await sleep(1000);
save('stop-first', await call('POST', `/api/v1/executions/${stId}/stop`));
save('stop-second', await call('POST', `/api/v1/executions/${stId}/stop`));
save('stop-unknown-id', await call('POST', '/api/v1/executions/99999999/stop'));
save('stop-held-call-answer', await stopped as Captured);
save('stop-get-after', await api(`/executions/${stId}`));
console.log('done');
