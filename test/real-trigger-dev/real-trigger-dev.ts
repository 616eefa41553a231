// What the real-Trigger.dev suites share: the Trigger.dev they were pointed at (.ci/real-trigger-dev.sh starts one
// with the workplace's tool and sets REAL_TRIGGER_DEV_*), its HTTP API, the task project's agent-keys.json, and the
// service as a real process with that Trigger.dev registered as its task runtime.
import { writeFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import pg from 'pg';
import { eventually, freePort, startServiceOnRuntime, type ServiceOnRuntime, createPlatformAgent, type CreatedAgent } from '../faults/service-process.ts';

export type { CreatedAgent } from '../faults/service-process.ts';

export const TD_URL = process.env.REAL_TRIGGER_DEV_URL ?? '';
export const TD_KEY = process.env.REAL_TRIGGER_DEV_SECRET_KEY ?? '';
export const TD_PAT = process.env.REAL_TRIGGER_DEV_ACCESS_TOKEN ?? '';
export const TD_PROJECT = process.env.REAL_TRIGGER_DEV_PROJECT_REF ?? '';
export const TD_VERSION = process.env.REAL_TRIGGER_DEV_VERSION ?? 'unknown';
/** The task project the dev worker runs (agent-keys.json is written there). */
export const TD_TASKS = process.env.REAL_TRIGGER_DEV_TASKS ?? '';
/** Trigger.dev's own database (the tool's private PostgreSQL): only to widen an alert channel to DEVELOPMENT. */
export const TD_DB = process.env.REAL_TRIGGER_DEV_DB ?? '';
/** Without a running Trigger.dev the suites are skipped (describe.skipIf). */
export const NO_REAL_TRIGGER_DEV = !TD_URL || !TD_KEY || !TD_TASKS;

/** One call to Trigger.dev's API with the secret key (or the personal access token); any status comes back. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field in the tests
export async function tdApi<T = any>(method: string, apiPath: string, body?: unknown, token = TD_KEY): Promise<{ status: number; json: T }> {
  const res = await fetch(`${TD_URL}${apiPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'x-trigger-api-version': '2025-07-16', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { text };
  }
  return { status: res.status, json: json as T };
}

export interface TdRun {
  id: string;
  status: string;
  taskIdentifier: string;
  output?: unknown;
  outputPresignedUrl?: string;
  error?: { message?: string; name?: string };
  tags: string[];
  isWaiting?: boolean;
}

export const tdRun = async (id: string): Promise<TdRun> => (await tdApi<TdRun>('GET', `/api/v3/runs/${id}`)).json;

const FINAL = ['COMPLETED', 'CANCELED', 'FAILED', 'CRASHED', 'SYSTEM_FAILURE', 'EXPIRED', 'TIMED_OUT'];
export const tdFinished = (id: string, ms = 60_000): Promise<TdRun> => eventually(() => tdRun(id), (r) => FINAL.includes(r.status), ms);

/**
 * Whether Trigger.dev's runs list answers: v4.4.3 falls back to PostgreSQL; v4.5.x serves it only from ClickHouse,
 * which the tool cannot install, and answers 500.
 */
export async function runsListWorks(): Promise<boolean> {
  return (await tdApi('GET', '/api/v1/runs?page[size]=1')).status === 200;
}

/** The runs Trigger.dev holds with a tag (its runs list: PostgreSQL on v4.4.3). */
export async function tdRunsTagged(tag: string): Promise<Array<{ id: string; status: string }>> {
  const res = await tdApi<{ data: Array<{ id: string; status: string }> }>('GET', `/api/v1/runs?filter[tag]=${encodeURIComponent(tag)}&page[size]=20`);
  expect(res.status).toBe(200);
  return res.json.data;
}

/** agent-keys.json in the task project (agent-keys.ts): merged, so suites may add their own. */
export function setTaskKeys(keys: Record<string, string>): void {
  const file = path.join(TD_TASKS, 'agent-keys.json');
  let current: Record<string, string>;
  try {
    current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    current = {};
  }
  writeFileSync(file, JSON.stringify({ ...current, ...keys }));
}

/** The service as a process, with an organization and the real Trigger.dev as its task runtime. */
export type ServiceOnTriggerDev = ServiceOnRuntime;

export async function startServiceOnTriggerDev(env: Record<string, string> = {}, runtime: { alert_secret?: string } = {}): Promise<ServiceOnTriggerDev> {
  const port = await freePort();
  // The tasks run on this machine and call back to the payload's URLs; the object store serving large outputs is
  // on 127.0.0.1 too, so the operator allow-lists it (decisions.md "Outbound HTTP").
  const local = { PORT: String(port), ARS_PUBLIC_URL: `http://127.0.0.1:${port}`, ARS_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' };
  return startServiceOnRuntime({ ...local, ...env }, { name: 'trigger.dev', kind: 'task', base_url: TD_URL, api_key: TD_KEY, ...runtime });
}

/** A platform agent on the Trigger.dev runtime whose task is `target`, as an admin creates it. */
export const createAgent = (s: ServiceOnTriggerDev, name: string, target: string, fields: Record<string, unknown> = {}): Promise<CreatedAgent> =>
  createPlatformAgent(s.service, s, name, target, fields);

/**
 * A webhook alert channel for failed runs, pointing at the service's alert endpoint with `secret`. Trigger.dev's API
 * takes only STAGING and PRODUCTION, while dev-mode runs are DEVELOPMENT: the channel is widened in its database.
 */
export async function alertChannelTo(url: string, secret: string): Promise<void> {
  const key = 'ars-real-trigger-dev';
  const res = await tdApi('POST', `/api/v1/projects/${TD_PROJECT}/alertChannels`, {
    name: 'Agent Run Service', alertTypes: ['run_failure'], channel: 'webhook', channelData: { url, secret },
    deduplicationKey: key, environmentTypes: ['STAGING', 'PRODUCTION'],
  }, TD_PAT);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  const db = new pg.Client({ connectionString: TD_DB });
  await db.connect();
  try {
    // The channel is upserted on its deduplication key (an earlier suite's gets this URL and secret).
    await db.query(`UPDATE "ProjectAlertChannel" SET "environmentTypes" = '{DEVELOPMENT,STAGING,PRODUCTION}', enabled = true WHERE "deduplicationKey" = $1`, [key]);
  } finally {
    await db.end();
  }
}

export { eventually };
