// Calls the admin API the way an operator does: with the admin bearer, through app.inject().
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';

export const adminAuth = { authorization: `Bearer ${ADMIN_TOKEN}` };

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Answers are read loosely, as an HTTP client would read them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export function call(t: TestApp, method: Method, url: string, payload?: unknown, headers: Record<string, string> = adminAuth): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url: `/api/admin${url}`,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });
}

/** A call expected to succeed with `status`; returns the parsed body (or null for 204). */
export async function ok<T = Json>(t: TestApp, status: number, method: Method, url: string, payload?: unknown): Promise<T> {
  const res = await call(t, method, url, payload);
  if (res.statusCode !== status) throw new Error(`${method} ${url} answered ${res.statusCode}, expected ${status}: ${res.body}`);
  return (res.body === '' ? null : res.json()) as T;
}

export async function newOrg(t: TestApp, name = 'Acme'): Promise<string> {
  return (await ok(t, 201, 'POST', '/orgs', { name })).id;
}

export async function newRuntime(t: TestApp, orgId: string, extra: Record<string, unknown> = {}): Promise<number> {
  return (await ok(t, 201, 'POST', '/runtimes', { org_id: orgId, name: 'n8n', kind: 'workflow', base_url: 'https://n8n.example.test', ...extra })).id;
}

/** A platform agent on a fresh org and runtime; returns the full create answer (secrets included). */
export async function newAgent(t: TestApp, extra: Record<string, unknown> = {}): Promise<Json> {
  const orgId = (extra.org_id as string | undefined) ?? (await newOrg(t));
  const runtimeId = extra.runtime_id === undefined ? await newRuntime(t, orgId) : extra.runtime_id;
  return ok(t, 201, 'POST', '/agents', { org_id: orgId, name: 'Agent', managed_by: 'platform', runtime_id: runtimeId, target: 'hook-path', ...extra });
}

export async function auditActions(t: TestApp, agentId?: number): Promise<Json[]> {
  const q = agentId === undefined ? '' : `?agent_id=${agentId}&limit=200`;
  return (await ok(t, 200, 'GET', `/audit${q}`)).data;
}

/** Expects a 400 whose message names `field`. */
export function expectInvalid(res: LightMyRequestResponse, field: string): void {
  if (res.statusCode !== 400) throw new Error(`expected 400 naming ${field}, got ${res.statusCode}: ${res.body}`);
  const body = res.json();
  if (body.code !== 'invalid_body' || !String(body.error).includes(field)) throw new Error(`expected the error to name ${field}: ${res.body}`);
}
