import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { createOutboundClient } from '../../src/lib/safe-http.ts';
import { Receiver, outboxFor, runTo, seedWebhookAction } from './outbox-helpers.ts';

// No operator allow-list: the defaults of a production deployment.
const clock = new ManualClock(new Date('2026-04-01T08:00:00Z'));
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp({ clock, config: { outboundAllowHosts: [] } });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t.close();
  await receiver.stop();
});

describe('decisions.md "Events": SSRF protection on webhook-action delivery', () => {
  it('decisions.md: loopback, private, link-local/metadata and IPv6 loopback URLs are refused, recorded as failed, never retried', async () => {
    const port = new URL(receiver.url).port;
    const targets = [
      `http://127.0.0.1:${port}/loopback`,
      `http://localhost:${port}/by-name`, // resolved, then refused on the resolved address
      'http://10.0.0.1/private',
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${port}/v6-loopback`,
      `http://[::ffff:127.0.0.1]:${port}/v4-mapped`,
    ];
    const agent = await seedAgent(t);
    for (const url of targets) await seedWebhookAction(t, agent.agent.id, 'completed', url);
    const runId = await runTo(t, agent.agent.id, 'completed');

    const tally = await deliverDueOnce(t.ctx, clock.now());

    expect(tally).toMatchObject({ delivered: 0, given_up: targets.length });
    expect(receiver.received).toHaveLength(0);
    const rows = await outboxFor(t, runId);
    expect(rows).toHaveLength(targets.length);
    for (const row of rows) {
      expect(row).toMatchObject({ attempts: 1, delivered_at: null, last_error: 'blocked_address' });
      expect(row.failed_at).not.toBeNull();
    }

    clock.advance(3_600_000);
    await deliverDueOnce(t.ctx, clock.now());
    expect(receiver.received).toHaveLength(0);
  });

  it('decisions.md: a URL that is not http(s) is refused the same way', async () => {
    const agent = await seedAgent(t);
    await seedWebhookAction(t, agent.agent.id, 'completed', 'file:///etc/passwd');
    const runId = await runTo(t, agent.agent.id, 'completed');

    await deliverDueOnce(t.ctx, clock.now());

    expect((await outboxFor(t, runId))[0]).toMatchObject({ attempts: 1, last_error: 'invalid_url: only http and https URLs are allowed' });
  });

  it('decisions.md: the operator allow-list (ARS_OUTBOUND_ALLOW_HOSTS) exempts exactly the listed addresses', async () => {
    const agent = await seedAgent(t);
    await seedWebhookAction(t, agent.agent.id, 'failed', `${receiver.url}/allowed`);
    await seedWebhookAction(t, agent.agent.id, 'failed', 'http://10.0.0.1/still-private');
    const runId = await runTo(t, agent.agent.id, 'failed', { error: 'x' });
    const client = createOutboundClient({ allowHosts: ['127.0.0.1'] });
    try {
      expect(await deliverDueOnce(t.ctx, clock.now(), client)).toMatchObject({ delivered: 1, given_up: 1 });
    } finally {
      await client.close();
    }
    expect(receiver.received.map((r) => r.path)).toEqual(['/allowed']);
    const rows = await outboxFor(t, runId);
    expect(rows.filter((r) => r.delivered_at !== null)).toHaveLength(1);
    expect(rows.filter((r) => r.last_error === 'blocked_address')).toHaveLength(1);
  });
});
