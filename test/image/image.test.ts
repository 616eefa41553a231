// Issue 37 items 2, 3 and 5 in the container: the image .ci/image.sh built (ARS_IMAGE; skipped without it, like
// test/real-n8n without REAL_N8N_URL), run with podman on the host network. On PGlite in a named volume: /livez,
// /readyz, the console and /openapi.json answer; HEALTHCHECK passes; it runs as uid 1000 with node as PID 1 and
// nothing else; one run goes end to end through the n8n fake (on this host); `podman stop` drains (logged) and
// exits 0; a second container on the same volume refuses to start; a restart on the volume keeps the run and
// the generated admin token. On the machine's PostgreSQL (ARS_IMAGE_DATABASE_URL): the same probes, a run, a
// clean stop.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { freePort } from '../faults/service-process.ts';

const IMAGE = process.env.ARS_IMAGE;
const DATABASE_URL = process.env.ARS_IMAGE_DATABASE_URL;
const exec = promisify(execFile);
const tag = randomBytes(4).toString('hex');
const made: { containers: string[]; volumes: string[] } = { containers: [], volumes: [] };

async function podman(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await exec('podman', args, { maxBuffer: 16 * 1024 * 1024 });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 };
  }
}

/** `podman run -d` on the host network; the container is removed after the suite. */
async function runContainer(name: string, env: Record<string, string>, volume?: string): Promise<void> {
  const args = ['run', '-d', '--name', name, '--network', 'host'];
  for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
  if (volume) args.push('-v', `${volume}:/data`);
  made.containers.push(name);
  const r = await podman(...args, IMAGE!);
  expect(r.code, r.stderr).toBe(0);
}

const logsOf = async (name: string) => {
  const r = await podman('logs', name);
  return r.stdout + r.stderr;
};

async function waitFor(url: string, name: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    const state = (await podman('inspect', name, '--format', '{{.State.Status}}')).stdout.trim();
    if (state === 'exited') throw new Error(`${name} exited:\n${await logsOf(name)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${ms} ms:\n${await logsOf(name)}`);
}

async function exitCodeOf(name: string): Promise<number> {
  return Number((await podman('inspect', name, '--format', '{{.State.ExitCode}}')).stdout.trim());
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field
async function api<T = any>(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : null) as T };
}

const n8n = new N8nFake();
beforeAll(async () => {
  if (!IMAGE) return;
  await n8n.start();
  n8n.registerWorkflow('image-smoke', async (w) => ({ json: { echoed: (w.body as { input: unknown }).input, outputs: 1 } }));
});
afterAll(async () => {
  if (!IMAGE) return;
  for (const c of made.containers) await podman('rm', '-f', '-v', '-t', '0', c); // -v: the anonymous /data volume of a container run without one
  for (const v of made.volumes) await podman('volume', 'rm', '-f', v);
  await n8n.stop();
});

/** The probes, the console, the OpenAPI document, and one run through the n8n fake; returns the run's id. */
async function probesAndOneRun(base: string, token: string): Promise<number> {
  expect((await fetch(`${base}/livez`)).status).toBe(200);
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  const console = await fetch(`${base}/`);
  expect(console.status).toBe(200);
  expect(console.headers.get('content-type')).toMatch(/^text\/html/);
  // The built console; its tags carry the answer's CSP nonce (issue 35), wherever in the tag.
  expect(await console.text()).toMatch(/<script\b[^>]*\btype="module"[^>]* src="\/assets\/[^"]+\.js"/);
  const openapi = await fetch(`${base}/openapi.json`);
  expect(openapi.status).toBe(200);
  expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);

  const org = await api(base, token, 'POST', '/api/admin/orgs', { name: `Image ${tag}` });
  expect(org.status).toBe(201);
  const runtime = await api(base, token, 'POST', '/api/admin/runtimes', { org_id: org.json.id, name: 'n8n', kind: 'workflow', base_url: n8n.url, api_key: n8n.apiKey });
  expect(runtime.status).toBe(201);
  const agent = await api(base, token, 'POST', '/api/admin/agents', {
    org_id: org.json.id, name: 'smoke', managed_by: 'platform', status: 'active', runtime_id: runtime.json.id, target: 'image-smoke', allow_external_triggers: true,
  });
  expect(agent.status).toBe(201);
  const answer = await api(base, agent.json.ingest_api_key, 'POST', `/api/agents/${agent.json.id}/runs/trigger-and-wait`, { input: { hello: 'container' } });
  expect(answer.status).toBe(200);
  expect(answer.json).toMatchObject({ status: 'completed', output_data: { echoed: { hello: 'container' } } });
  return answer.json.runId;
}

/** `podman stop` with room for the drain: exit code 0 and both drain lines in the log. */
async function stopDrained(name: string): Promise<void> {
  const stop = await podman('stop', '-t', '40', name);
  expect(stop.code, stop.stderr).toBe(0);
  expect(await exitCodeOf(name)).toBe(0);
  const logs = await logsOf(name);
  expect(logs).toMatch(/"signal":"SIGTERM".*"msg":"shutting down"/);
  expect(logs).toMatch(/"msg":"stopped"/);
}

describe.skipIf(!IMAGE)('the image on PGlite in a volume', () => {
  const volume = `ars-smoke-${tag}`;
  const name = `ars-smoke-${tag}`;
  let base = '';
  let adminToken = '';
  let runId = 0;
  let env: Record<string, string> = {};

  it('starts as uid 1000 with node as PID 1 alone, answers its probes and HEALTHCHECK, and runs a run end to end', async () => {
    made.volumes.push(volume);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = { PORT: String(port) };
    await runContainer(name, env, volume);
    await waitFor(`${base}/readyz`, name);
    adminToken = /Admin token \(shown once; also in \/data\/admin-token\):\s+(\S+)/.exec(await logsOf(name))?.[1] ?? '';
    expect(adminToken).toMatch(/^ars_admin_/);

    expect((await podman('exec', name, 'id', '-u')).stdout.trim()).toBe('1000');
    const top = (await podman('top', name, 'pid', 'user', 'args')).stdout.trim().split('\n').slice(1).map((l) => l.trim().split(/\s+/));
    expect(top).toEqual([['1', 'node', 'node', 'dist/server.js']]);
    expect((await podman('healthcheck', 'run', name)).code).toBe(0);
    // Production dependencies of the service only: no workspace's (the Trigger.dev example), no dev tool, no npm.
    for (const absent of ['node_modules/@trigger.dev', 'node_modules/tsx', 'node_modules/vite', 'node_modules/typescript', '/usr/local/bin/npm', 'src']) {
      expect((await podman('exec', name, 'test', '-e', absent)).code, absent).not.toBe(0);
    }
    expect((await podman('exec', name, 'test', '-e', 'node_modules/@electric-sql/pglite/dist/pglite.wasm')).code).toBe(0);
    runId = await probesAndOneRun(base, adminToken);
    expect(runId).toBeGreaterThan(0);
  }, 240_000);

  it('refuses a second container on the same volume, naming ARS_DATA_DIR; the first keeps running', async () => {
    const second = `ars-smoke-second-${tag}`;
    await runContainer(second, { PORT: String(await freePort()) }, volume);
    const deadline = Date.now() + 60_000;
    while ((await podman('inspect', second, '--format', '{{.State.Status}}')).stdout.trim() !== 'exited' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(await exitCodeOf(second)).toBe(2);
    expect(await logsOf(second)).toMatch(/^cannot start: ARS_DATA_DIR \/data is in use by another process of this service \(pid 1 on host /m);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  }, 120_000);

  it('podman stop drains and exits 0; a restart on the volume keeps the run and the admin token', async () => {
    await stopDrained(name);
    const again = `ars-smoke-again-${tag}`;
    await runContainer(again, env, volume);
    await waitFor(`${base}/readyz`, again);
    expect(await logsOf(again)).not.toContain('Admin token (shown once');
    const run = await api(base, adminToken, 'GET', `/api/admin/runs/${runId}`);
    expect(run.status).toBe(200);
    expect(run.json.status).toBe('completed');
    await stopDrained(again);
  }, 240_000);
});

describe.skipIf(!IMAGE || !DATABASE_URL)('the image on PostgreSQL (host network)', () => {
  it('answers its probes, runs a run end to end, and stops cleanly', async () => {
    const name = `ars-smoke-pg-${tag}`;
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const adminToken = `image_admin_${randomBytes(24).toString('hex')}`;
    await runContainer(name, {
      PORT: String(port), DATABASE_URL: DATABASE_URL!, ARS_MASTER_KEY: randomBytes(32).toString('base64'), ARS_ADMIN_TOKEN: adminToken,
    });
    await waitFor(`${base}/readyz`, name);
    expect(await logsOf(name)).toMatch(/"storage":"postgres".*"msg":"agent run service ready"/);
    await probesAndOneRun(base, adminToken);
    await stopDrained(name);
  }, 240_000);
});
