import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { verifyWebhook } from '../../src/events/standard-webhooks.ts';
import { deliverDueOnce, OutboxWorker } from '../../src/events/outbox-worker.ts';
import { claimDueDeliveries } from '../../src/events/outbox-repo.ts';
import { GIVE_UP_AFTER_MS } from '../../src/events/deliver-event.ts';
import { outboxFor, Receiver, runTo, seedWebhookAction } from './outbox-helpers.ts';

const PUBLIC_URL = 'https://ars.example.test';
const clock = new ManualClock(new Date('2026-04-01T08:00:00Z'));
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp({ clock, config: { outboundAllowHosts: ['127.0.0.1'], publicUrl: PUBLIC_URL } });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t.close();
  await receiver.stop();
});

/** An agent with one webhook action on `onState` pointing at the receiver (under a path naming the test). */
async function agentWithAction(onState: string, path: string): Promise<{ agent: SeededAgent; secret: string; url: string }> {
  const agent = await seedAgent(t);
  const url = `${receiver.url}/${path}`;
  const { secret } = await seedWebhookAction(t, agent.agent.id, onState, url);
  return { agent, secret, url };
}

const at = (path: string) => receiver.received.filter((r) => r.path === `/${path}`);
const deliver = () => deliverDueOnce(t.ctx, clock.now());

describe('decisions.md "Events": webhook actions deliver { run, output }, signed', () => {
  it('spec part 6: a completed run is POSTed as { run, output } with a valid Standard Webhooks signature', async () => {
    const { agent, secret } = await agentWithAction('completed', 'completed');
    const runId = await runTo(t, agent.agent.id, 'completed', { outputData: { answer: 42 }, outputs: 3 });

    expect(await deliver()).toMatchObject({ delivered: 1 });

    const [hit, ...more] = at('completed');
    expect(more).toHaveLength(0);
    expect(verifyWebhook(hit!.headers, hit!.rawBody, secret, clock.now())).toBe(true);
    const [row] = await outboxFor(t, runId);
    expect(hit!.headers['webhook-id']).toBe(row!.message_id);
    expect(hit!.headers['webhook-timestamp']).toBe(String(clock.now().getTime() / 1000));
    expect(hit!.headers['content-type']).toMatch(/^application\/json/);
    expect(hit!.body).toEqual({
      run: {
        runId,
        agentId: agent.agent.id,
        status: 'completed',
        output_data: { answer: 42 },
        outputs: 3,
        error: null,
        duration_ms: 0,
        started_at: clock.now().toISOString(),
        completed_at: clock.now().toISOString(),
        created_at: clock.now().toISOString(),
        created_by: null,
        external_run_id: null,
        metadata: {},
        input: { topic: 'x' },
        runtime_note: null,
      },
      output: { answer: 42 },
    });
    expect(row).toMatchObject({ attempts: 1, failed_at: null, last_error: null, locked_until: null });
    expect(row!.delivered_at).not.toBeNull();

    // Delivered means done: later passes send nothing more.
    clock.advance(3_600_000);
    await deliver();
    expect(at('completed')).toHaveLength(1);
  });

  it('decisions.md: a failed run is delivered with its error, output null', async () => {
    const { agent, secret } = await agentWithAction('failed', 'failed');
    const runId = await runTo(t, agent.agent.id, 'failed', { error: { name: 'Error', message: 'boom' } });

    await deliver();

    const [hit] = at('failed');
    expect(verifyWebhook(hit!.headers, hit!.rawBody, secret, clock.now())).toBe(true);
    expect(hit!.body).toMatchObject({ run: { runId, status: 'failed', error: { name: 'Error', message: 'boom' } }, output: null });
    expect(hit!.body).not.toHaveProperty('run_url');
  });

  it('decisions.md: a cancelled run is delivered', async () => {
    const { agent } = await agentWithAction('cancelled', 'cancelled');
    const runId = await runTo(t, agent.agent.id, 'cancelled');

    await deliver();

    expect(at('cancelled').map((r) => r.body)).toEqual([expect.objectContaining({ run: expect.objectContaining({ runId, status: 'cancelled' }), output: null })]);
  });

  it('spec part 6: a waiting notification resolves run_url to the callback\'s url, and never carries the token id', async () => {
    const { agent, secret } = await agentWithAction('waiting', 'waiting-url');
    const tokenId = 'http://n8n.internal/webhook-waiting/77?signature=secret-ish';
    const runId = await runTo(t, agent.agent.id, 'waiting', {
      waitState: { tokenId, description: 'Approve the refund', url: 'https://review.example.test/r/9', output: { amount: 12 } },
    });

    await deliver();

    const [hit] = at('waiting-url');
    expect(verifyWebhook(hit!.headers, hit!.rawBody, secret, clock.now())).toBe(true);
    expect(hit!.body).toMatchObject({
      run: { runId, status: 'waiting' },
      output: null,
      run_url: 'https://review.example.test/r/9',
      waiting: { description: 'Approve the refund', url: 'https://review.example.test/r/9', output: { amount: 12 } },
    });
    expect(hit!.rawBody).not.toContain('webhook-waiting');
  });

  it('spec part 6: without a url, run_url is the generic run-detail link on ARS_PUBLIC_URL', async () => {
    const { agent } = await agentWithAction('waiting', 'waiting-generic');
    const runId = await runTo(t, agent.agent.id, 'waiting', { waitState: { tokenId: 'waitpoint_1', description: 'Look', url: null, output: null } });

    await deliver();

    expect(at('waiting-generic')[0]!.body).toMatchObject({ run_url: `${PUBLIC_URL}/runs/${runId}`, waiting: { description: 'Look', url: null, output: null } });
  });

  it('decisions.md: only actions on the new status fire, and only the run\'s own agent\'s', async () => {
    const { agent } = await agentWithAction('completed', 'mine-completed');
    await seedWebhookAction(t, agent.agent.id, 'failed', `${receiver.url}/mine-failed`);
    const stranger = await seedAgent(t);
    await seedWebhookAction(t, stranger.agent.id, 'completed', `${receiver.url}/stranger-completed`);

    await runTo(t, agent.agent.id, 'completed', { outputData: {} });
    await deliver();

    expect(at('mine-completed')).toHaveLength(1);
    expect(at('mine-failed')).toHaveLength(0);
    expect(at('stranger-completed')).toHaveLength(0);
  });
});

describe('decisions.md "Events": durable outbox, retries with backoff, at-least-once', () => {
  it('decisions.md: a receiver that fails twice then succeeds gets exactly one successful delivery, same webhook-id throughout', async () => {
    const { agent, secret } = await agentWithAction('completed', 'flaky');
    const runId = await runTo(t, agent.agent.id, 'completed', { outputData: { n: 1 } });
    receiver.script.push(500, 503);

    expect(await deliver()).toMatchObject({ retry: 1 });
    let [row] = await outboxFor(t, runId);
    expect(row).toMatchObject({ attempts: 1, delivered_at: null, failed_at: null, last_error: 'http_error: HTTP 500' });
    const wait1 = row!.next_attempt_at.getTime() - clock.now().getTime();
    expect(wait1).toBeGreaterThanOrEqual(8_000); // 10 s ± 20 %
    expect(wait1).toBeLessThanOrEqual(12_000);

    await deliver(); // not due yet
    expect(at('flaky')).toHaveLength(1);

    clock.advance(12_000);
    expect(await deliver()).toMatchObject({ retry: 1 });
    [row] = await outboxFor(t, runId);
    const wait2 = row!.next_attempt_at.getTime() - clock.now().getTime();
    expect(wait2).toBeGreaterThanOrEqual(24_000); // 30 s ± 20 %
    expect(wait2).toBeLessThanOrEqual(36_000);

    clock.advance(36_000);
    expect(await deliver()).toMatchObject({ delivered: 1 });
    clock.advance(24 * 3_600_000);
    await deliver();

    const hits = at('flaky');
    expect(hits).toHaveLength(3);
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(hits.map((h) => h.rawBody)).toEqual([hits[0]!.rawBody, hits[0]!.rawBody, hits[0]!.rawBody]); // same event
    const lastAt = new Date(Number(hits[2]!.headers['webhook-timestamp']) * 1000);
    expect(verifyWebhook(hits[2]!.headers, hits[2]!.rawBody, secret, lastAt)).toBe(true); // signed at its own attempt
    [row] = await outboxFor(t, runId);
    expect(row).toMatchObject({ attempts: 3, failed_at: null, last_error: null });
    expect(row!.delivered_at).not.toBeNull();
  });

  it('decisions.md: a 4xx answer is retried too (a receiver mid-deploy), and an unreachable receiver', async () => {
    const { agent } = await agentWithAction('completed', 'not-yet');
    const down = await seedAgent(t);
    await seedWebhookAction(t, down.agent.id, 'completed', `${await unusedUrl()}/hook`);
    const a = await runTo(t, agent.agent.id, 'completed');
    const b = await runTo(t, down.agent.id, 'completed');
    receiver.script.push(404);

    await deliver();

    expect((await outboxFor(t, a))[0]).toMatchObject({ attempts: 1, failed_at: null, last_error: 'http_error: HTTP 404' });
    expect((await outboxFor(t, b))[0]).toMatchObject({ attempts: 1, failed_at: null, last_error: 'network_error: ECONNREFUSED' });
    clock.advance(12_000);
    await deliver();
    expect((await outboxFor(t, a))[0]!.delivered_at).not.toBeNull();
  });

  it('decisions.md: gives up after 24 hours of failures (last try on the deadline), recording the last error without secrets', async () => {
    const { agent, secret } = await agentWithAction('completed', 'always-down');
    const runId = await runTo(t, agent.agent.id, 'completed');
    const created = clock.now().getTime();
    receiver.fallback = 500;
    try {
      for (let i = 0; i < 30 && (await outboxFor(t, runId))[0]!.failed_at === null; i += 1) {
        await deliver();
        clock.advance(3 * 3_600_000);
      }
    } finally {
      receiver.fallback = 200;
    }
    const [row] = await outboxFor(t, runId);
    expect(row!.failed_at).not.toBeNull();
    expect(row!.delivered_at).toBeNull();
    // Passes every 3 h: attempts at 0, 3, …, 21 h, and the last one on the 24 h deadline itself.
    expect(row!.failed_at!.getTime() - created).toBe(GIVE_UP_AFTER_MS);
    expect(row!.attempts).toBe(9);
    expect(at('always-down')).toHaveLength(9);
    expect(row!.last_error).toBe('http_error: HTTP 500');
    expect(t.logs.join('\n')).not.toContain(secret.slice(6));

    clock.advance(48 * 3_600_000);
    await deliver();
    expect(at('always-down')).toHaveLength(row!.attempts); // given up means no more attempts
  });

  it('decisions.md: a signing secret that cannot be opened (master key changed) is retried, not sent unsigned', async () => {
    const agent = await seedAgent(t);
    const { id } = await seedWebhookAction(t, agent.agent.id, 'completed', `${receiver.url}/unsignable`);
    await t.db.query("UPDATE webhook_actions SET signing_secret_enc = 'v1:00000000:AAAA:AAAA' WHERE id = $1", [id]);
    const runId = await runTo(t, agent.agent.id, 'completed');

    expect(await deliver()).toMatchObject({ retry: 1, error: 0 });

    expect(at('unsignable')).toHaveLength(0);
    expect((await outboxFor(t, runId))[0]).toMatchObject({ attempts: 1, failed_at: null, last_error: 'event cannot be signed (signing secret unreadable)' });
  });

  it('decisions.md scale-out: a claimed row is leased — skipped by other workers until the lease lapses (a crashed worker)', async () => {
    const { agent } = await agentWithAction('completed', 'leased');
    const runId = await runTo(t, agent.agent.id, 'completed');

    const claimed = await claimDueDeliveries(t.db, clock.now(), new Date(clock.now().getTime() + 60_000), 100); // then "crashes"
    expect(claimed.map((c) => c.run_id)).toContain(runId);

    await deliver();
    expect(at('leased')).toHaveLength(0);
    clock.advance(60_001);
    await deliver();
    expect(at('leased')).toHaveLength(1);
    expect((await outboxFor(t, runId))[0]!.delivered_at).not.toBeNull();
  });

  it('decisions.md: the background worker delivers a new event without anyone calling it', async () => {
    const { agent } = await agentWithAction('completed', 'background');
    const worker = new OutboxWorker(t.ctx, 200);
    worker.start();
    try {
      await runTo(t, agent.agent.id, 'completed', { outputData: { bg: true } });
      await expect.poll(() => at('background').length, { timeout: 15_000 }).toBe(1);
    } finally {
      await worker.stop();
    }
    expect(at('background')[0]!.body).toMatchObject({ output: { bg: true } });
  });
});
