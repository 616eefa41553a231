// The shapes of n8n's public API (X-N8N-API-KEY, /api/v1) as the real n8n 2.8.4 and 2.41.1 answer them, captured
// in test/fakes/n8n-captures/ (README there). Pure functions: the fake (n8n-fake.ts) keeps the state.
import { createHash } from 'node:crypto';

export type N8nVersion = '2.8.4' | '2.41.1';
export type N8nExecutionStatus = 'new' | 'running' | 'waiting' | 'success' | 'error' | 'crashed' | 'canceled' | 'unknown';

/** Largest `limit` of the list routes: 2.8.4 answers 400 above it, 2.41.1 clamps to it. */
export const N8N_MAX_LIMIT = 250;
export const TERMINAL = new Set<N8nExecutionStatus>(['success', 'error', 'crashed', 'canceled']);

/** What the Webhook node records as its one output item: the inbound request. */
export interface N8nWebhookItem {
  headers: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
  webhookUrl: string;
  executionMode: 'production';
}

export interface N8nWorkflowMeta {
  id: string;
  name: string;
  path: string;
  webhookId: string;
  versionId: string;
  createdAt: Date;
}

/** The execution fields the API shows (FakeN8nExecution adds the fake's own bookkeeping). */
export interface N8nExecutionFields {
  id: string;
  /** The registered workflow's id (see N8nFake.registerWorkflow), or one derived from the path. */
  workflowId: string;
  status: N8nExecutionStatus;
  createdAt: Date;
  /** 2.8.4 resets it when a waiting execution resumes (createdAt keeps the start); 2.41.1 keeps it. */
  startedAt: Date;
  stoppedAt?: Date;
  waitTill?: Date;
  /**
   * n8n holds it in memory (ActiveExecutions): the list leaves it out unless asked for status=running (⚠), and its
   * saved data is still the start state. Webhook-started: true until it ends, `waiting` included; otherwise true
   * while new or running. Set it to model a row left `running` by an n8n that died.
   */
  inMemory: boolean;
  runData: Record<string, Array<Record<string, unknown>>>;
  lastNodeExecuted?: string;
  error?: { message: string; stack?: string };
  /** The inbound request as the Webhook node records it (webhook-started executions only). */
  webhookItem?: N8nWebhookItem;
}

/** A real-looking workflow id (16 letters and digits), stable per webhook path. */
export function workflowIdFor(path: string): string {
  return createHash('sha256').update(path).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 16);
}

export function uuidFor(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function webhookNode(wf: N8nWorkflowMeta): Record<string, unknown> {
  return {
    id: uuidFor(`${wf.id}:webhook`), name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2, position: [0, 0],
    webhookId: wf.webhookId,
    parameters: { httpMethod: 'POST', path: wf.path, responseMode: 'responseNode', options: {} },
  };
}

function workflowGraph(wf: N8nWorkflowMeta): { nodes: unknown[]; connections: Record<string, unknown> } {
  const respond = {
    id: uuidFor(`${wf.id}:respond`), name: 'Respond to Webhook', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1,
    position: [220, 0], parameters: { respondWith: 'firstIncomingItem', options: {} },
  };
  return { nodes: [webhookNode(wf), respond], connections: { Webhook: { main: [[{ node: 'Respond to Webhook', type: 'main', index: 0 }]] } } };
}

/**
 * One item of GET /api/v1/workflows. Since 2.0 `activeVersion.nodes` is the published graph the production webhook
 * serves and `nodes` the latest saved one: a public-API PUT republishes (both equal, seen on both versions), an
 * editor save without publishing would leave them apart (not tried). The fake keeps them equal.
 */
export function workflowJson(wf: N8nWorkflowMeta, version: N8nVersion): Record<string, unknown> {
  const { nodes, connections } = workflowGraph(wf);
  const at = wf.createdAt.toISOString();
  const groups = version === '2.41.1' ? { nodeGroups: [] } : {};
  return {
    id: wf.id, name: wf.name, active: true, activeVersionId: wf.versionId, createdAt: at, updatedAt: at, isArchived: false,
    versionId: wf.versionId, triggerCount: 1, nodes, connections, ...groups, settings: { executionOrder: 'v1' }, staticData: null,
    pinData: {}, meta: null, tags: [],
    shared: [{ createdAt: at, updatedAt: at, role: 'workflow:owner', workflowId: wf.id, projectId: 'fakeProject00001' }],
    activeVersion: {
      versionId: wf.versionId, workflowId: wf.id, nodes, connections, ...groups, authors: 'Local Owner', name: null, description: null,
      autosaved: false, createdAt: at, updatedAt: at,
    },
  };
}

function executionData(ex: N8nExecutionFields, wf: N8nWorkflowMeta, version: N8nVersion): Record<string, unknown> {
  // n8n saves no progress of a running execution (saveExecutionProgress off): until it ends, the database row
  // holds the start state, the request sitting in nodeExecutionStack and an empty runData (⚠).
  const unsaved = ex.inMemory && ex.status === 'running';
  const stack = unsaved && ex.webhookItem ? [{ node: webhookNode(wf), data: { main: [[{ json: ex.webhookItem }]] }, source: null }] : [];
  return {
    version: 1,
    startData: {},
    resultData: unsaved
      ? { runData: {} }
      : { ...(ex.error ? { error: ex.error } : {}), runData: ex.runData, ...(ex.lastNodeExecuted ? { lastNodeExecuted: ex.lastNodeExecuted } : {}) },
    executionData: { contextData: {}, nodeExecutionStack: stack, metadata: {}, waitingExecution: {}, waitingExecutionSource: {} },
    ...(version === '2.41.1' ? { resumeToken: createHash('sha256').update(`resume:${ex.id}`).digest('hex') } : {}),
    ...(ex.waitTill ? { waitTill: ex.waitTill.toISOString() } : {}),
  };
}

/**
 * An execution as GET /executions/{id} (`list: false`) or one item of GET /executions (`list: true`) shows it.
 * The list items carry fewer fields than the single GET (no createdAt, deletedAt, …); ids are strings.
 */
export function executionJson(
  ex: N8nExecutionFields, wf: N8nWorkflowMeta, opts: { version: N8nVersion; includeData: boolean; list: boolean },
): Record<string, unknown> {
  const { version, includeData, list } = opts;
  const newer = version === '2.41.1';
  const base: Record<string, unknown> = {
    id: ex.id, finished: ex.status === 'success', mode: 'webhook', retryOf: null, retrySuccessId: null, status: ex.status,
    ...(list ? {} : { createdAt: ex.createdAt.toISOString() }),
    startedAt: ex.startedAt.toISOString(), stoppedAt: ex.stoppedAt?.toISOString() ?? null,
    ...(list ? {} : { deletedAt: null }),
    workflowId: ex.workflowId, waitTill: ex.waitTill?.toISOString() ?? null,
  };
  const data = includeData ? executionData(ex, wf, version) : undefined;
  const size = data ? Buffer.byteLength(JSON.stringify(data)) : 0;
  if (!list) {
    base.storedAt = 'db';
    if (newer) {
      Object.assign(base, {
        tracingContext: null, deduplicationKey: null, jsonSizeBytes: size, binaryDataSizeBytes: 0, workflowVersionId: wf.versionId,
        usedPrivateCredentials: false,
      });
    }
  } else if (newer && includeData) {
    Object.assign(base, { storedAt: 'db', jsonSizeBytes: size, workflowVersionId: wf.versionId });
  }
  if (!data) return base;
  const { nodes, connections } = workflowGraph(wf);
  return { ...base, data, workflowData: { id: wf.id, name: wf.name, nodes, connections, settings: { executionOrder: 'v1' } }, customData: {} };
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const STATUS_2_8 = ['canceled', 'error', 'running', 'success', 'waiting'];
const STATUS_2_41 = ['canceled', 'crashed', 'error', 'new', 'running', 'success', 'unknown', 'waiting'];

/**
 * `limit`: default 100; 0 (and, on 2.8.4, a negative one) means no limit at all (TypeORM's take 0); above 250:
 * 400 on 2.8.4, clamped to 250 on 2.41.1.
 */
export function parseLimit(raw: string | null, version: N8nVersion): Parsed<number> {
  if (raw === null || raw === '') return { ok: true, value: 100 };
  const n = version === '2.8.4' ? Number(raw) : parseInt(raw, 10);
  if (!Number.isFinite(n)) {
    return { ok: false, message: version === '2.8.4' ? 'request/query/limit must be number' : 'request/query/limit Param `limit` must be a valid integer' };
  }
  if (n < 0 && version === '2.41.1') return { ok: false, message: 'request/query/limit Param `limit` must be a non-negative integer' };
  if (n > N8N_MAX_LIMIT) {
    return version === '2.8.4' ? { ok: false, message: `request/query/limit must be <= ${N8N_MAX_LIMIT}` } : { ok: true, value: N8N_MAX_LIMIT };
  }
  return { ok: true, value: Math.max(0, Math.trunc(n)) };
}

/** `nextCursor` is base64 JSON: `{"lastId":"5","limit":1}` for executions, `{"limit":1,"offset":1}` for workflows. */
export function encodeCursor(value: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

export function decodeCursor(cursor: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64').toString());
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export interface ExecutionQuery {
  workflowId?: string;
  status?: string;
  includeData: boolean;
  limit: number;
  lastId?: number;
  startedAfter?: Date;
  startedBefore?: Date;
}

export function parseExecutionQuery(q: URLSearchParams, version: N8nVersion): Parsed<ExecutionQuery> {
  const limit = parseLimit(q.get('limit'), version);
  if (!limit.ok) return limit;
  const out: ExecutionQuery = { includeData: q.get('includeData') === 'true', limit: limit.value };
  const status = q.get('status');
  if (status !== null) {
    const allowed = version === '2.8.4' ? STATUS_2_8 : STATUS_2_41;
    if (!allowed.includes(status)) {
      return {
        ok: false,
        message: version === '2.8.4'
          ? `request/query/status must be equal to one of the allowed values: ${allowed.join(', ')}`
          : `request/query/status Invalid enum value. Expected ${allowed.map((s) => `'${s}'`).join(' | ')}, received '${status}'`,
      };
    }
    out.status = status;
  }
  if (q.get('workflowId')) out.workflowId = q.get('workflowId')!;
  for (const key of ['startedAfter', 'startedBefore'] as const) {
    const raw = q.get(key);
    if (raw === null) continue;
    if (version === '2.8.4') return { ok: false, message: `Unknown query parameter '${key}'` };
    const d = new Date(raw);
    if (!ISO_DATETIME.test(raw) || Number.isNaN(d.getTime())) return { ok: false, message: `request/query/${key} Invalid datetime` };
    out[key] = d;
  }
  const cursor = q.get('cursor');
  if (cursor) {
    const c = decodeCursor(cursor);
    if (!c) return { ok: false, message: 'An invalid cursor was provided' };
    if (typeof c.lastId === 'string' || typeof c.lastId === 'number') out.lastId = Number(c.lastId);
    if (typeof c.limit === 'number' && Number.isInteger(c.limit)) out.limit = version === '2.8.4' ? c.limit : Math.min(Math.max(c.limit, 1), N8N_MAX_LIMIT);
  }
  return { ok: true, value: out };
}

/** Does `status` (already validated) select an execution? On 2.8.4 `error` also selects `crashed`. */
export function statusMatches(filter: string | undefined, status: N8nExecutionStatus, version: N8nVersion): boolean {
  if (filter === undefined) return true;
  if (filter === 'error' && version === '2.8.4') return status === 'error' || status === 'crashed';
  return filter === status;
}

/** 401 bodies: 2.8.4 tells a missing header from a wrong key; 2.41.1 does not. */
export function unauthorizedBody(version: N8nVersion, headerPresent: boolean): { message: string } {
  if (version === '2.41.1') return { message: 'Unauthorized' };
  return { message: headerPresent ? 'unauthorized' : "'X-N8N-API-KEY' header required" };
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** GET /api/v1/workflows: offset pagination (cursor `{"limit","offset"}`), `active` and `name` filters. */
export function listWorkflows(all: N8nWorkflowMeta[], q: URLSearchParams, version: N8nVersion): ApiAnswer {
  const limit = parseLimit(q.get('limit'), version);
  if (!limit.ok) return { status: 400, body: { message: limit.message } };
  let offset = 0;
  let take = limit.value;
  const cursor = q.get('cursor');
  if (cursor) {
    const c = decodeCursor(cursor);
    if (!c) return { status: 400, body: { message: 'An invalid cursor was provided' } };
    offset = typeof c.offset === 'number' ? c.offset : 0;
    take = typeof c.limit === 'number' ? c.limit : take;
  }
  const name = q.get('name')?.trim();
  // Every workflow of the fake is published: active=false finds none.
  const found = all.filter((w) => q.get('active') !== 'false' && (!name || w.name.includes(name)));
  const page = take === 0 ? found.slice(offset) : found.slice(offset, offset + take);
  const more = take > 0 && found.length > offset + take;
  return { status: 200, body: { data: page.map((w) => workflowJson(w, version)), nextCursor: more ? encodeCursor({ limit: take, offset: offset + take }) : null } };
}

/**
 * GET /api/v1/executions: newest first (id descending), cursor `{"lastId","limit"}`, `nextCursor` null on the
 * last page. The trap (⚠): executions held in memory are left out unless status=running is asked for; 2.8.4
 * leaves out every one in memory (a `waiting` one too: it is then in no list at all), 2.41.1 only running ones.
 */
export function listExecutions<E extends N8nExecutionFields>(
  all: E[], q: URLSearchParams, version: N8nVersion, toJson: (ex: E, includeData: boolean) => unknown,
): ApiAnswer {
  const parsed = parseExecutionQuery(q, version);
  if (!parsed.ok) return { status: 400, body: { message: parsed.message } };
  const f = parsed.value;
  const hidden = (ex: E): boolean => f.status !== 'running' && ex.inMemory && (version === '2.8.4' || ex.status === 'running');
  const matching = all
    .filter((ex) => (!f.workflowId || ex.workflowId === f.workflowId) && statusMatches(f.status, ex.status, version) && !hidden(ex))
    .filter((ex) => (!f.startedAfter || ex.startedAt >= f.startedAfter) && (!f.startedBefore || ex.startedAt <= f.startedBefore))
    .sort((a, b) => Number(b.id) - Number(a.id));
  const after = f.lastId === undefined ? matching : matching.filter((ex) => Number(ex.id) < f.lastId!);
  const page = f.limit === 0 ? after : after.slice(0, f.limit);
  const more = page.length > 0 && after.length > page.length;
  return {
    status: 200,
    body: { data: page.map((ex) => toJson(ex, f.includeData)), nextCursor: more ? encodeCursor({ lastId: page.at(-1)!.id, limit: f.limit }) : null },
  };
}
