// decisions.md "Errors": bad input is a 4xx naming the field, never a 5xx. Every route that stores the JSON body
// it is sent refuses what PostgreSQL cannot store (here: nesting far past MAX_JSON_DEPTH, which overflowed
// JSON.stringify at INSERT time and was a 500) before anything is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { zoneToken } from '../credentials/connections.ts';
import { expectError, permissiveLimiter, runCount } from '../sync/sync-helpers.ts';

let t: TestApp;
let task: SeededAgent;
let download: SeededAgent;
let user: string;

beforeAll(async () => {
  t = await createTestApp({ limiter: permissiveLimiter });
  const orgId = await seedOrg(t);
  user = await seedUser(t, { orgId });
  // Nothing may reach a runtime: an unreachable one would turn a wrongly accepted body into a visible 500.
  const runtime = { kind: 'task' as const, baseUrl: await unusedUrl(), apiKey: 'k' };
  task = await seedAgent(t, { orgId, runtime });
  download = await seedAgent(t, { orgId, runtime: { ...runtime, kind: 'workflow' }, output_kind: 'file_download' });
});
afterAll(() => t?.close());

/** `{"input":{"a":[[[…1…]]]}}`, 100,000 levels deep: JSON.parse copes, JSON.stringify overflows its stack. */
const DEEP = 100_000;
const deepBody = `{"input":{"a":${'['.repeat(DEEP)}1${']'.repeat(DEEP)}}}`;

const json = { 'content-type': 'application/json' };

describe('a 100,000-deep input is a 4xx naming the field, and no run is written', () => {
  const ingest: Array<[string, string, () => SeededAgent, number, string]> = [
    ['spec 4.1: /trigger', 'trigger', () => task, 400, 'invalid_body'],
    ['spec 4.2: /trigger-and-wait (422, decisions.md)', 'trigger-and-wait', () => task, 422, 'validation_failed'],
    ['spec 4.3: /trigger-and-download', 'trigger-and-download', () => download, 400, 'invalid_body'],
  ];
  it.each(ingest)('%s', async (_label, path, agent, status, code) => {
    const a = agent();
    const before = await runCount(t, a.agent.id);
    const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/${path}`, headers: { ...a.ingestAuth, ...json }, payload: deepBody });
    const body = expectError(res, status, code);
    expect(body.error).toMatch(/^body\.input\.a\.0\.0/);
    expect(body.error).toContain('nests deeper than 512 levels');
    expect(await runCount(t, a.agent.id)).toBe(before);
  });

  const zone: Array<[string, string, () => SeededAgent]> = [
    ['zones.md: POST /runs (as 4.1)', '/runs', () => task],
    ['zones.md: POST /runs/wait (as 4.2)', '/runs/wait', () => task],
    ['zones.md: POST /runs/download (as 4.3)', '/runs/download', () => download],
  ];
  it.each(zone)('%s: 400, as its other validation failures', async (_label, path, agent) => {
    const a = agent();
    const before = await runCount(t, a.agent.id);
    const token = await zoneToken(t, a.agent, user);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/zones/agents/${a.agent.id}${path}`,
      headers: { authorization: `Bearer ${token}`, ...json },
      payload: deepBody,
    });
    const body = expectError(res, 400, 'invalid_body');
    expect(body.error).toMatch(/^body\.input\.a\.0\.0/);
    expect(await runCount(t, a.agent.id)).toBe(before);
  });
});
