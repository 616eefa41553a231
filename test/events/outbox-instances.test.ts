// decisions.md "Scale-out": any number of instances run the outbox worker against one database. PostgreSQL only:
// PGlite is one embedded connection, so a second instance cannot exist there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent } from '../helpers/fixtures.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { Receiver, runTo, seedWebhookAction } from './outbox-helpers.ts';

const clock = new ManualClock(new Date('2026-04-01T08:00:00Z'));
let t: TestApp;
let receiver: Receiver;

describe.skipIf(!onPostgres)('decisions.md scale-out: outbox delivery on two instances', () => {
  beforeAll(async () => {
    t = await createTestApp({ clock, config: { outboundAllowHosts: ['127.0.0.1'] } });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('decisions.md: two instances delivering at once never send one event twice', async () => {
    const other = await t.another();
    const agent = await seedAgent(t);
    await seedWebhookAction(t, agent.agent.id, 'completed', `${receiver.url}/hook`);
    const events = 45; // more than two claim batches
    for (let i = 0; i < events; i += 1) await runTo(t, agent.agent.id, 'completed', { outputData: { i } });

    const [a, b] = await Promise.all([
      deliverDueOnce(t.ctx, clock.now()),
      deliverDueOnce(other.app.ctx, clock.now()),
    ]);

    expect(a.delivered + b.delivered).toBe(events);
    expect(a.superseded + b.superseded).toBe(0);
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(events);
    expect(new Set(ids).size).toBe(events);
    const { rows } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE delivered_at IS NULL');
    expect(rows[0]!.n).toBe(0);
  });
});
