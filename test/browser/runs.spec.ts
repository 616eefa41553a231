// Issue 14 "Runs" and "Run detail": create an agent, trigger a run and watch it complete without a reload; replay;
// cancel.
import { expect, test } from '@playwright/test';
import { apiGet, seeded, shot, signIn, signOut } from './helpers.ts';

test.beforeEach(async ({ page }) => signIn(page, seeded.orgAdmin.token));

test('an org admin creates an agent, starts a run and watches it complete without a reload', async ({ page }) => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
  await shot(page, 'agents');
  await page.getByRole('link', { name: 'New agent' }).or(page.getByRole('button', { name: 'New agent' })).first().click();
  const name = `Browser summarizer ${Date.now()}`;
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Organization').selectOption({ label: 'Acme' });
  await page.getByLabel('Managed by').selectOption('platform');
  await page.getByLabel('Runtime').selectOption({ label: 'Trigger.dev (local stand-in) (task)' });
  await page.getByLabel('Target (workflow or task id)').fill('summarize');
  await page.getByLabel('Poll interval (seconds)').fill('10');
  await page.getByLabel('Max run duration (seconds)').fill('600');
  await shot(page, 'agent-new');
  await page.getByRole('button', { name: 'Create agent' }).click();
  // The new keys are shown once, then the agent's own page.
  await expect(page.getByText(/ars_ingest_[A-Za-z0-9_-]{43}/)).toBeVisible();
  await shot(page, 'agent-created');
  await page.getByRole('button', { name: 'Open the agent' }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(`^${name}`) })).toBeVisible();
  await shot(page, 'agent-detail');

  let reloads = 0;
  page.on('load', () => reloads++);
  await page.getByText('Run now').click();
  await page.getByLabel('Input (JSON object)', { exact: true }).fill('{"text": "Runs are tracked. Nothing is lost."}');
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  const runId = Number(page.url().split('/').pop());
  // The stand-in finishes the task at once; the service learns it by polling (10 s) and the page by its live feed.
  await expect(page.getByText('completed', { exact: true }).first()).toBeVisible({ timeout: 45_000 });
  expect(reloads).toBe(0);
  await shot(page, 'run-detail');
  const run = await apiGet(page, `/api/admin/runs/${runId}`);
  expect(run).toMatchObject({ status: 'completed', source: 'console' });
});

test('replay starts the run again, linked both ways', async ({ page }) => {
  const original = seeded.runs.completed[2]!; // the summarizer's run
  await page.goto(`/runs/${original}`);
  await page.getByRole('button', { name: 'Replay' }).click();
  await expect(page).not.toHaveURL(new RegExp(`/runs/${original}$`));
  await expect(page.getByRole('link', { name: `Run #${original}` })).toBeVisible();
  const replay = Number(page.url().split('/').pop());
  expect((await apiGet(page, `/api/admin/runs/${replay}`)).replay_of).toBe(original);
});

test('cancel asks first, then ends the run', async ({ page }) => {
  // A run that waits for review: not terminal, so it can be cancelled.
  const started = await page.request.post(`/api/agents/${seeded.agents.review.id}/runs/trigger`, {
    headers: { authorization: `Bearer ${seeded.agents.review.ingestKey}` },
    data: { input: { subject: 'to be cancelled' } },
  });
  expect(started.status()).toBe(201);
  const { runId } = await started.json();
  await page.goto(`/runs/${runId}`);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Confirm cancel' }).click();
  await expect(page.getByText('cancelled', { exact: true }).first()).toBeVisible();
  expect((await apiGet(page, `/api/admin/runs/${runId}`)).status).toBe('cancelled');
});

test('the runs page lists the organization’s runs and pages through them', async ({ page }) => {
  await page.goto('/runs');
  await expect(page.getByRole('table')).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(`^#?${seeded.runs.waiting}$`) }).first()).toBeVisible();
  await shot(page, 'runs');
  for (const [path, name] of [['/review', 'review'], ['/dashboard', 'dashboard'], ['/audit', 'audit']] as const) {
    await page.goto(path);
    await expect(page.getByText('Loading…')).toHaveCount(0);
    await shot(page, name);
  }
});

test('the dashboard lists runs and outputs per agent; an agent’s link shows its outputs per day', async ({ page }) => {
  await page.goto('/dashboard?days=30');
  const agents = page.getByRole('table', { name: 'Runs and outputs per agent in the period' });
  await expect(agents).toBeVisible();
  const first = agents.getByRole('link').first();
  const name = (await first.textContent())!;
  await first.click();
  await expect(page).toHaveURL(/agent_id=\d+/);
  await expect(page.getByRole('heading', { name: `Outputs per day — ${name}` })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Runs and outputs per agent in the period' }).getByRole('row')).toHaveCount(2); // the header and that agent
});

test('a platform admin’s pages: organizations, users and runtimes', async ({ page }) => {
  await signOut(page);
  await signIn(page, seeded.adminToken);
  for (const [tab, seen] of [['orgs', 'Acme'], ['users', seeded.orgAdmin.email], ['runtimes', 'n8n (local stand-in)']] as const) {
    await page.goto(`/admin/${tab}`);
    await expect(page.getByText(seen).first()).toBeVisible();
    await expect(page.getByText('Loading…')).toHaveCount(0);
    await shot(page, `admin-${tab}`);
  }
});

test('issue 40 items 5 and 6: the header shows the live connection; an outage is a banner, and the pages come back with the service', async ({ page }) => {
  // The run stream at the network boundary: while `up`, each connection opens and (as a proxy cutting idle streams
  // would) ends at once, and the browser reconnects 300 ms later; while down, every connection fails.
  let up = true;
  await page.route('**/api/admin/runs/events', (route) =>
    up ? route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }, body: 'retry: 300\n\n' }) : route.abort('connectionrefused'),
  );
  await signIn(page, seeded.member.token);
  const status = page.getByRole('banner').getByRole('status');
  await expect(status).toHaveText(/● Live|Reconnecting…/);
  up = false;
  await expect(page.getByRole('alert')).toContainText('The service cannot be reached', { timeout: 20_000 });
  await expect(status).toHaveText('Offline');
  await shot(page, 'outage');
  up = true;
  await expect(page.getByText('The service cannot be reached')).toHaveCount(0, { timeout: 20_000 });
  await expect(status).toHaveText(/● Live|Reconnecting…/);
});

test('issue 40 item 5: against the real service the stream stays live', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await expect(page.getByRole('banner').getByRole('status')).toHaveText('● Live');
});

test('issue 40 item 7: "Run now" on an agent whose runtime cannot be reached links to the failed run', async ({ page }) => {
  const admin = { authorization: `Bearer ${seeded.adminToken}`, 'content-type': 'application/json' };
  const runtime = await page.request.post('/api/admin/runtimes', {
    headers: admin, data: { org_id: seeded.orgs.acme, name: `unreachable ${Date.now()}`, kind: 'task', base_url: 'http://127.0.0.1:9', api_key: 'tr_dev_unreachable' },
  });
  expect(runtime.status()).toBe(201);
  const agent = await page.request.post('/api/admin/agents', {
    headers: admin, data: { org_id: seeded.orgs.acme, name: 'Runtime down', managed_by: 'platform', status: 'active', runtime_id: (await runtime.json()).id, target: 'my-task' },
  });
  expect(agent.status()).toBe(201);
  const agentId = (await agent.json()).id as number;
  await signIn(page, seeded.adminToken);
  await page.goto(`/agents/${agentId}`);
  await page.getByText('Run now').click();
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page.getByRole('alert')).toContainText('runtime');
  const link = page.getByRole('link', { name: /^Open run #\d+$/ });
  await expect(link).toBeVisible();
  await link.click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expect(page.getByText('failed').first()).toBeVisible();
});

test('issue 40 item 6: a 429 says when to try again (the service\'s Retry-After)', async ({ page }) => {
  await signIn(page, seeded.orgAdmin.token);
  // The limiter's answer at the network boundary: the console must read Retry-After, whatever made the 429.
  await page.route('**/api/admin/agents/*/runs', (route) =>
    route.request().method() === 'POST'
      ? route.fulfill({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '37' }, body: JSON.stringify({ error: 'rate limit exceeded', code: 'rate_limited', requestId: 'req_test' }) })
      : route.fallback(),
  );
  await page.goto(`/agents/${seeded.agents.summary.id}`);
  await page.getByText('Run now').click();
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page.getByRole('alert')).toHaveText('rate limit exceeded — try again in 37 s');
});
