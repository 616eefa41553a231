// Issue 14 "Zone apps opened inside the console through the zone proxy, isolated so they cannot script the console"
// (zones.md; docs/security.md "Zone apps"). The demo's zone app (scripts/demo/zone-app.ts) runs a probe script.
import { expect, test } from '@playwright/test';
import { seeded, shot, signIn } from './helpers.ts';

test('a member opens the agent’s zone app inside the console, and starts a run from it as themself', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto(`/agents/${seeded.agents.lead.id}`);
  await page.getByRole('link', { name: 'Open zone app' }).click();
  const app = page.frameLocator(`iframe[title="${seeded.agents.lead.name} zone app"]`);
  await expect(app.getByText(`Signed in as user ${seeded.member.id}`)).toBeVisible();
  await shot(page, 'zone-app');

  await app.getByLabel('Company').fill('Hooli');
  await app.getByRole('button', { name: 'Enrich' }).click();
  await expect(app.getByRole('heading', { name: /^Run \d+: completed$/ })).toBeVisible();
  await expect(app.getByLabel('Run output')).toContainText('hooli.example');
});

test('the zone app’s script runs, but reaches neither the console’s page nor the admin API with its session', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto(`/zone-apps/${seeded.agents.lead.id}`);
  const app = page.frameLocator(`iframe[title="${seeded.agents.lead.name} zone app"]`);
  await expect(app.locator('#script')).toHaveText('ran');
  await expect(app.locator('#parent')).toHaveText('blocked');
  await expect(app.locator('#admin-api')).toHaveText('blocked');
});

test('issue 35: the console runs only its own scripts — a zone app’s script under /zones/*/app/ is refused by its CSP', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto('/runs');
  // As an HTML injection into the console would: a script element naming the zone app's script on this origin
  // (`'self'` admitted it). The script writes 'ran' into #script when it runs.
  const outcome = await page.evaluate(async (src) => {
    const marker = document.createElement('output');
    marker.id = 'script';
    marker.textContent = 'did not run';
    document.body.append(marker);
    const violated = new Promise<string>((resolve) => document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true }));
    const loaded = new Promise<string>((resolve) => {
      const script = document.createElement('script');
      script.src = src;
      script.onload = () => resolve('loaded');
      script.onerror = () => resolve('error');
      document.head.append(script);
    });
    const first = await Promise.race([violated, loaded]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    return { first, text: marker.textContent };
  }, `/zones/${seeded.agents.lead.id}/app/app.js`);
  expect(outcome).toEqual({ first: expect.stringMatching(/^script-src/), text: 'did not run' });
  // The console's own script still runs under the same policy: the page is interactive.
  await expect(page.getByRole('heading', { name: /runs/i }).first()).toBeVisible();
});
