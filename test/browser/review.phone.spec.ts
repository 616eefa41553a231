// Issue 14 "Waiting for review": a reviewer approves from a phone (390×844): the description and the output beside
// the resume form, no sideways scrolling, the run resumed as the reviewer (audit run.waitpoint_completed).
import { expect, test } from '@playwright/test';
import { apiGet, seeded, shot, signIn } from './helpers.ts';

test('a member resumes the waiting run from the review page on a phone', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review' }).click();
  const card = page.getByRole('form', { name: `Resume run ${seeded.runs.waiting}` });
  await expect(card).toBeVisible();
  await expect(card.getByRole('button', { name: 'Approve' })).toBeVisible();
  // Issue 40 item 7: "Waiting since" is when the wait began (the timeline's waiting entry), not the run's creation.
  const detail = await apiGet(page, `/api/admin/runs/${seeded.runs.waiting}`);
  const since = [...detail.timeline].reverse().find((t: { status: string }) => t.status === 'waiting').at;
  expect(since).not.toBe(detail.created_at);
  await expect(page.getByRole('listitem').filter({ has: card }).getByText('Waiting since').locator('time')).toHaveAttribute('datetime', since);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await shot(page, 'review-phone');
  await card.getByRole('button', { name: 'Approve' }).click();
  await expect.poll(async () => (await apiGet(page, `/api/admin/runs/${seeded.runs.waiting}`)).status, { timeout: 20_000 }).not.toBe('waiting');
  const audit = await apiGet(page, `/api/admin/audit?agent_id=${seeded.agents.review.id}&action=run.waitpoint_completed`);
  expect(audit.data[0]).toMatchObject({ actor_user_id: seeded.member.id, run_id: seeded.runs.waiting, details: { via: 'console' } });
});
