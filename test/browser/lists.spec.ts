// Issue 40 item 1: a world past 200 agents. 250 more agents in Globex (the Acme views of the other specs stay as
// they were), one of them — the oldest — with a run: every agent is reachable by paging and by search, the agent
// picker finds the oldest by name, and its run is named after it in the runs list.
import { expect, test } from '@playwright/test';
import { seeded, signIn } from './helpers.ts';

const COUNT = 250;
const name = (i: number) => `Bulk agent ${String(i).padStart(3, '0')}`;
let oldest: { id: number; runId: number };

test.beforeAll(async ({ request }) => {
  const admin = { authorization: `Bearer ${seeded.adminToken}` };
  const created: Array<{ id: number; ingest_api_key: string }> = [];
  for (let i = 0; i < COUNT; i++) {
    const res = await request.post('/api/admin/agents', { headers: admin, data: { org_id: seeded.orgs.globex, name: name(i), managed_by: 'standalone' } });
    expect(res.status()).toBe(201);
    created.push(await res.json());
  }
  const first = created[0]!;
  const run = await request.post(`/api/agents/${first.id}/runs/ingest`, {
    headers: { authorization: `Bearer ${first.ingest_api_key}` },
    data: { externalRunId: 'oldest-of-250', status: 'completed', startedAt: new Date().toISOString(), completedAt: new Date().toISOString() },
  });
  expect(run.status()).toBe(200);
  oldest = { id: first.id, runId: (await run.json()).runId };
});

test('the agents page pages through every agent and searches by name', async ({ page }) => {
  await signIn(page, seeded.adminToken);
  await page.goto('/agents');
  await expect(page.getByRole('link', { name: name(COUNT - 1) })).toBeVisible();
  await expect(page.getByRole('link', { name: name(0), exact: true })).toHaveCount(0); // the oldest is pages away
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(page).toHaveURL(/cursor=/);
  await page.getByLabel('Name contains').fill(name(0));
  await page.getByLabel('Name contains').press('Enter');
  await expect(page.getByRole('link', { name: name(0), exact: true })).toBeVisible();
  await expect(page.getByRole('table').getByRole('row')).toHaveCount(2); // the header and the one match
});

test('a run of the oldest of 250 agents is named after it, and the agent picker finds it by name', async ({ page }) => {
  await signIn(page, seeded.adminToken);
  await page.goto('/runs');
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: new RegExp(`^#?${oldest.runId}$`) }) });
  await expect(row.getByText(name(0))).toBeVisible();
  const picker = page.getByRole('form', { name: 'Filter runs' });
  await picker.getByRole('searchbox', { name: 'Agent: find by name' }).fill(name(0));
  await expect(picker.getByRole('status')).toHaveText('1 matching');
  await picker.getByRole('combobox', { name: 'Agent' }).selectOption({ label: name(0) });
  await expect(page).toHaveURL(new RegExp(`agent_id=${oldest.id}`));
  await expect(page.getByRole('link', { name: new RegExp(`^#?${oldest.runId}$`) })).toBeVisible();
});
