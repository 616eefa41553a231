// `npm run demo` (scripts/demo.ts) as a new user meets it: one child process on a free port, in a demo folder of its
// own, checked through what it prints and through the service's API. The demo is always PGlite, whichever
// database the suite runs on.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort } from '../faults/service-process.ts';
import { freshDemoFolder } from '../../scripts/demo/demo-folder.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const READY_LINE = 'Ctrl-C stops everything.';

let dir: string;
let child: ChildProcess;
let exited: Promise<number | null>;
let out = '';
/** The printed `export NAME=value` lines, as a shell would read them. */
const vars: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ars-demo-test-'));
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: String(await freePort()), ARS_DEMO_DIR: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  // PGlite's first start dominates (a few seconds; far more on a loaded machine): wait for the block, or the exit.
  await new Promise<void>((resolve, reject) => {
    const check = () => (out.includes(READY_LINE) ? resolve() : undefined);
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`the demo exited (${code}) before it was ready:\n${out}`)));
  });
  for (const line of out.split('\n')) {
    if (!line.startsWith('export ')) continue;
    for (const [, name, value] of line.replace(/\s+#.*$/, '').matchAll(/([A-Z_]+)=(\S+)/g)) vars[name!] = value!;
  }
}, 150_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field
async function call(method: string, urlPath: string, token: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${vars.BASE}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const runsIn = async (status: string) => (await call('GET', `/api/admin/runs?status=${status}`, vars.ADMIN_TOKEN!)).json.data;

describe('npm run demo', () => {
  it('prints an export for the base URL, both tokens, every agent and the waiting run; demo.env holds the same, readable by its owner only', async () => {
    for (const name of ['BASE', 'ADMIN_TOKEN', 'USER_TOKEN', 'LEAD_AGENT', 'LEAD_KEY', 'REPORT_AGENT', 'REPORT_KEY', 'SUMMARY_AGENT', 'SUMMARY_KEY', 'REVIEW_AGENT', 'REVIEW_KEY', 'REVIEW_AGENT_KEY', 'SYNC_AGENT', 'SYNC_KEY', 'WAITING_RUN']) {
      expect(vars[name], name).toMatch(/\S/);
    }
    const envFile = await readFile(path.join(dir, 'demo.env'), 'utf8');
    expect(envFile.trim().split('\n')).toEqual(out.split('\n').filter((l) => l.startsWith('export ')));
    expect((await stat(path.join(dir, 'demo.env'))).mode & 0o077).toBe(0);
  });

  it('seeds through the API: the review run waits, four runs completed (JSON, file, task, reported), one failed', async () => {
    expect((await runsIn('waiting')).map((r: { runId: number }) => r.runId)).toEqual([Number(vars.WAITING_RUN)]);
    const completed = await runsIn('completed');
    expect(completed.map((r: { agentId: number }) => r.agentId).sort()).toEqual(
      [vars.LEAD_AGENT, vars.REPORT_AGENT, vars.SUMMARY_AGENT, vars.SYNC_AGENT].map(Number).sort(),
    );
    expect(completed.find((r: { agentId: number }) => r.agentId === Number(vars.REPORT_AGENT)).output_data).toMatchObject({ kind: 'file_download', filename: 'leads.csv' });
    const failed = await runsIn('failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ agentId: Number(vars.SYNC_AGENT), error: expect.stringContaining('503') });
  });

  it('the user token signs in: the lead enricher\'s zone app greets its user, a wrong token is 401', async () => {
    const page = await fetch(`${vars.BASE}/zones/${vars.LEAD_AGENT}/app/`, { headers: { authorization: `Bearer ${vars.USER_TOKEN}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/Signed in as user <code>[0-9a-f-]{36}<\/code>/);
    expect((await call('GET', `/zones/${vars.LEAD_AGENT}/app/`, `${vars.USER_TOKEN}x`)).status).toBe(401);
  });

  it('/trigger-and-wait on the JSON workflow agent answers 200, completed, with the workflow output', async () => {
    const res = await call('POST', `/api/agents/${vars.LEAD_AGENT}/runs/trigger-and-wait`, vars.LEAD_KEY!, { input: { company: 'Initech' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'completed', outputs: 1, output_data: { company: 'Initech', domain: 'initech.example' } });
  });

  it('resuming the waiting run through its waitpoint lets the task finish it with the reviewer\'s answer', async () => {
    const runId = vars.WAITING_RUN!;
    const res = await call('POST', `/api/runs/${runId}/waitpoint`, vars.REVIEW_AGENT_KEY!, { payload: { approved: true } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ok: true });
    const run = await eventually(() => call('GET', `/api/admin/runs/${runId}`, vars.ADMIN_TOKEN!), (r) => r.json.status === 'completed', 20_000);
    expect(run.json).toMatchObject({ status: 'completed', output_data: { approved: true } });
  });

  it('offers to open exactly the pages that answer (the console, /docs, /openapi.json)', async () => {
    const offered = out.split('\n').filter((l) => l.startsWith(`  ${vars.BASE}/`)).map((l) => l.trim().split(/\s+/)[0]!);
    for (const page of ['/', '/docs', '/openapi.json']) {
      const url = `${vars.BASE}${page}`;
      const res = await fetch(url);
      await res.body?.cancel();
      expect(offered.includes(url), url).toBe(res.status === 200);
    }
  });

  it('Ctrl-C stops the service and both stand-ins and exits 0; only the demo folder was written', async () => {
    const standIns = [...out.matchAll(/stand-in\s+(http:\/\/127\.0\.0\.1:\d+)/g)].map((m) => m[1]!);
    expect(standIns).toHaveLength(2);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const url of [vars.BASE!, ...standIns]) await expect(fetch(url), url).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['MADE-BY-NPM-RUN-DEMO', 'data', 'demo.env', 'service.log']);
  });
});

describe('the demo folder', () => {
  it('is emptied at each start; a folder the demo did not make, or one a running demo holds, is refused and left as it was', async () => {
    const base = await mkdtemp(path.join(tmpdir(), 'ars-demo-folder-'));
    try {
      const mine = await freshDemoFolder(path.join(base, 'demo'));
      await writeFile(path.join(mine.dir, 'old-run.txt'), 'from the last demo');
      await mine.release();
      await freshDemoFolder(mine.dir);
      expect(await readdir(mine.dir)).not.toContain('old-run.txt');

      const theirs = path.join(base, 'theirs');
      await mkdir(theirs);
      await writeFile(path.join(theirs, 'master.key'), 'not the demo\'s');
      await expect(freshDemoFolder(theirs)).rejects.toThrow(/not made by the demo/);
      expect(await readdir(theirs)).toEqual(['master.key']);

      await writeFile(path.join(mine.dir, 'demo.pid'), String(process.ppid)); // a live process that is not this one
      await expect(freshDemoFolder(mine.dir)).rejects.toThrow(/another demo/);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
