// decisions.md "Recovering lost runs": the instance holding a run's runtime call keeps its lease in the future;
// a released run's lease is left to lapse; shutdown hands a run back with a lease that lapses at once. Real
// clock and real timers, short leases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent } from '../helpers/fixtures.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { claimLostRuns, RunLeases } from '../../src/runs/run-leases.ts';

let t: TestApp;
let agentId: number;
const LEASE_MS = 300;

beforeAll(async () => {
  t = await createTestApp();
  agentId = (await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }, target: 'x' })).agent.id;
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function leasedRun(leases: RunLeases): Promise<number> {
  const now = new Date();
  return (await insertRun(t.db, { agentId, status: 'queued', source: 'trigger', now, invokeLeaseUntil: leases.firstLease(now) })).id;
}
const lost = async () => (await claimLostRuns(t.db, new Date(), 100, 60_000)).map((l) => l.run.id);

describe('run leases', () => {
  it('a held run is renewed past its first lease and never claimed as lost; released, it lapses and is', async () => {
    const leases = new RunLeases(t.db, t.ctx.clock, LEASE_MS, t.ctx.log);
    const held = await leasedRun(leases);
    const release = leases.hold(held);
    await sleep(LEASE_MS * 3);
    expect(await lost()).not.toContain(held);
    release();
    expect(leases.size).toBe(0);
    await sleep(LEASE_MS * 2);
    expect(await lost()).toContain(held);
  });

  it('handBack lets the lease lapse at once and stops renewing it', async () => {
    const leases = new RunLeases(t.db, t.ctx.clock, 60_000, t.ctx.log);
    const run = await leasedRun(leases);
    leases.hold(run);
    expect(await lost()).not.toContain(run);
    await leases.handBack([run]);
    expect(leases.size).toBe(0);
    expect(await lost()).toContain(run);
    leases.stop();
  });
});
