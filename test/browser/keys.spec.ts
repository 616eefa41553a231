// Issue 14 "Agents": reveal and rotate a key (spec 2.1: the admin reveals, copies and rotates "in the UI").
import { expect, test } from '@playwright/test';
import { seeded, signIn } from './helpers.ts';

test('an org admin rotates the ingest key: the new key is shown once and the old one stops working', async ({ page }) => {
  const agent = seeded.agents.summary;
  await signIn(page, seeded.orgAdmin.token);
  await page.goto(`/agents/${agent.id}`);
  const ingest = page.getByRole('region', { name: 'Ingest key' }).or(page.locator('section, li, div').filter({ hasText: 'Ingest key' }).last());
  await ingest.getByRole('button', { name: 'Rotate' }).click();
  await ingest.getByRole('button', { name: 'Confirm rotate' }).click();
  await expect(page.getByText(/ars_ingest_[A-Za-z0-9_-]{43}/)).toBeVisible();
  const fresh = (await page.getByText(/ars_ingest_[A-Za-z0-9_-]{43}/).first().textContent())!.match(/ars_ingest_[A-Za-z0-9_-]{43}/)![0];
  const trigger = (key: string) => page.request.post(`/api/agents/${agent.id}/runs/trigger`, { headers: { authorization: `Bearer ${key}` }, data: {} });
  expect((await trigger(agent.ingestKey)).status()).toBe(401);
  expect((await trigger(fresh)).status()).toBe(201);
});

test('the webhook token is revealed on demand, and the reveal is audited with the webhook URLs to copy', async ({ page }) => {
  const agent = seeded.agents.lead;
  await signIn(page, seeded.adminToken);
  // Webhook triggers on (a platform admin may set every toggle): the agent gets its token.
  const res = await page.request.patch(`/api/admin/agents/${agent.id}`, {
    headers: { authorization: `Bearer ${seeded.adminToken}` },
    data: { allow_webhook_triggers: true },
  });
  expect(res.status()).toBe(200);
  await page.goto(`/agents/${agent.id}`);
  await page.getByRole('button', { name: 'Reveal' }).click();
  await expect(page.getByText(/ars_whk_[A-Za-z0-9_-]{43}/).first()).toBeVisible();
  await expect(page.getByText(new RegExp(`/api/agents/${agent.id}/runs/webhook/ars_whk_`)).first()).toBeVisible();
  const audit = await page.request.get(`/api/admin/audit?agent_id=${agent.id}`, { headers: { authorization: `Bearer ${seeded.adminToken}` } });
  expect(JSON.stringify(await audit.json())).toContain('webhook_token');
});
