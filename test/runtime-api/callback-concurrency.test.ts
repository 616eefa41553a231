// Spec part 1: "Whichever writes a terminal status first wins. The others become no-ops." Simultaneous conflicting
// callbacks must leave exactly one terminal state and answer 200 (that state) or 409 (the other), never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { permissiveLimiter, seedRun } from './support.ts';

let t: TestApp;
let a: SeededAgent;
beforeAll(async () => {
  t = await createTestApp({ limiter: permissiveLimiter });
  a = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
});
afterAll(() => t.close());

const send = (runId: number, payload: object) => t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload });

describe('concurrent callbacks on one run', () => {
  it('spec part 1: 20 simultaneous complete-vs-failed callbacks leave exactly one terminal state (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const run = await seedRun(t, a.agent.id, round % 2 === 0 ? 'running' : 'queued');
      const wants = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'completed' : 'failed'));
      const answers = await Promise.all(
        wants.map((want, i) =>
          send(run.id, want === 'completed' ? { type: 'output', complete: true, output: { by: i } } : { type: 'output', failed: true, error: { message: `by ${i}` } }),
        ),
      );
      const row = (await readRun(t, run.id))!;
      expect(['completed', 'failed']).toContain(row.status);
      answers.forEach((res, i) => expect(res.statusCode, `round ${round} call ${i}: ${res.body}`).toBe(wants[i] === row.status ? 200 : 409));
      // The stored fields are the winner's, not a mix.
      if (row.status === 'completed') expect(row.error).toBeNull();
      else expect(row.output_data).toBeNull();
    }
  });

  it('a burst of every callback type at once answers only 200 or 409, never a 5xx', async () => {
    for (let round = 0; round < 5; round++) {
      const run = await seedRun(t, a.agent.id, 'queued');
      const bodies = [
        { type: 'started' },
        { type: 'output', output: { step: 1 }, outputs: 1 },
        { type: 'waiting', tokenId: `wp_${round}`, description: 'approve' },
        { type: 'output', complete: true, outputs: 2 },
        { type: 'output', failed: true, error: { message: 'x' } },
        { type: 'started' },
        { type: 'output', output: { step: 2 } },
      ];
      const answers = await Promise.all([...bodies, ...bodies].map((b) => send(run.id, b)));
      for (const res of answers) expect([200, 409], res.body).toContain(res.statusCode);
      expect(['completed', 'failed']).toContain((await readRun(t, run.id))!.status);
    }
  });
});
