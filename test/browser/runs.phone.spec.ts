// Issue 40 item 3: the runs page at phone width (390×844): the first run is on the first screen (the filters are
// folded under "Filters"), table cells keep their words whole (the table scrolls in its own box), the page itself
// never scrolls sideways.
import { expect, test } from '@playwright/test';
import { seeded, shot, signIn } from './helpers.ts';

test('the runs list on a phone: runs first, words whole, no sideways page', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.goto('/runs');
  const firstRun = page.getByRole('table').getByRole('row').nth(1);
  await expect(firstRun).toBeVisible();
  expect((await firstRun.boundingBox())!.y).toBeLessThan(844); // on the first screen
  await expect(page.getByRole('form', { name: 'Filter runs' })).toBeHidden(); // folded
  const badge = firstRun.locator('.badge').first();
  const line = await badge.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || parseFloat(getComputedStyle(el).fontSize) * 1.5);
  expect((await badge.boundingBox())!.height).toBeLessThan(line * 1.9); // one line: "completed", not "co/mp/le/ted"
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await page.getByText('Filters').click();
  await expect(page.getByRole('form', { name: 'Filter runs' })).toBeVisible();
  await shot(page, 'runs-phone');
});
