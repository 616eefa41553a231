// Issue 14 "the role matrix": a member never sees another organization's runs; a member cannot manage; the
// platform admin pages are for platform admins; a cross-origin POST is refused.
import { expect, test } from '@playwright/test';
import { seeded, signIn } from './helpers.ts';

const runLink = (id: number) => new RegExp(`^#?${id}$`);

test('a member of Acme never sees Globex’s run, in the list or by its address', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto('/runs');
  await expect(page.getByRole('table')).toBeVisible();
  await expect(page.getByRole('link', { name: runLink(seeded.runs.waiting) }).first()).toBeVisible();
  await expect(page.getByRole('link', { name: runLink(seeded.runs.hidden) })).toHaveCount(0);
  await page.goto(`/runs/${seeded.runs.hidden}`);
  await expect(page.getByText(/not found/i).first()).toBeVisible();
  await expect(page.getByText('globex-only')).toHaveCount(0);
});

test('a member of Globex sees Globex’s run and none of Acme’s', async ({ page }) => {
  await signIn(page, seeded.outsider.token);
  await page.goto('/runs');
  await expect(page.getByRole('link', { name: runLink(seeded.runs.hidden) }).first()).toBeVisible();
  await expect(page.getByRole('link', { name: runLink(seeded.runs.waiting) })).toHaveCount(0);
  await page.goto(`/runs/${seeded.runs.waiting}`);
  await expect(page.getByText(/not found/i).first()).toBeVisible();
});

test('a member sees an agent but no key controls, and no admin pages', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto(`/agents/${seeded.agents.summary.id}`);
  await expect(page.getByRole('heading', { name: 'Summarizer' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Rotate' })).toHaveCount(0);
  await page.goto('/admin');
  await expect(page.getByRole('button', { name: 'Create organization' })).toHaveCount(0);
});

test('a cross-origin POST is refused: the session cookie does not make another site’s request count', async ({ page, context }) => {
  await signIn(page, seeded.orgAdmin.token);
  const [cookie] = (await context.cookies()).filter((c) => c.name === 'ars_session');
  const started = await page.request.post(`/api/agents/${seeded.agents.review.id}/runs/trigger`, {
    headers: { authorization: `Bearer ${seeded.agents.review.ingestKey}` },
    data: { input: { subject: 'must survive' } },
  });
  const { runId } = await started.json();
  // Another site's page (localhost is another site than 127.0.0.1) makes the browser send a cancel.
  const other = seeded.baseUrl.replace('127.0.0.1', 'localhost');
  await page.goto(`${other}/sign-in`);
  await page.evaluate(async (url) => {
    await fetch(url, { method: 'POST', credentials: 'include', mode: 'no-cors' }).catch(() => undefined);
  }, `${seeded.baseUrl}/api/admin/runs/${runId}/cancel`);
  // The same request with the cookie attached by hand and a foreign Origin: 403 from the service itself.
  const forged = await page.request.post(`/api/admin/runs/${runId}/cancel`, { headers: { cookie: `ars_session=${cookie!.value}`, origin: 'https://evil.example' } });
  expect(forged.status()).toBe(403);
  const run = await page.request.get(`/api/admin/runs/${runId}`, { headers: { authorization: `Bearer ${seeded.adminToken}` } });
  expect((await run.json()).status).not.toBe('cancelled');
});

test('issue 40 items 2 and 4: a member\'s screens have no section or control the API would refuse', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto(`/agents/${seeded.agents.summary.id}`);
  await expect(page.getByRole('heading', { name: 'Summarizer' })).toBeVisible();
  await expect(page.getByRole('heading', { name: /Connections/ })).toHaveCount(0);
  await expect(page.getByRole('heading', { name: /Webhook actions/ })).toHaveCount(0);
  await expect(page.getByText(/only an admin/i)).toHaveCount(0);
  await page.goto(`/runs/${seeded.runs.waiting}`);
  await expect(page.getByRole('heading', { name: /^Run #/ })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Replay' })).toBeVisible(); // a member may replay (and resume)
  await expect(page.getByRole('button', { name: 'Cancel' })).toHaveCount(0);
});

test('issue 40 item 2: an org admin gets the controls of their role', async ({ page }) => {
  await signIn(page, seeded.orgAdmin.token);
  await page.goto(`/runs/${seeded.runs.waiting}`);
  await expect(page.getByRole('button', { name: 'Cancel' })).toBeVisible();
  await page.goto(`/agents/${seeded.agents.summary.id}`);
  await expect(page.getByRole('heading', { name: /Connections/ })).toBeVisible();
  await expect(page.getByRole('heading', { name: /Webhook actions/ })).toBeVisible();
});
