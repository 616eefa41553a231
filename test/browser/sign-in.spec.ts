// Issue 14 "Sign-in and roles": sign-in and sign-out per role, in a real browser on the real service.
import { expect, test } from '@playwright/test';
import { seeded, shot, signIn, signOut } from './helpers.ts';

test('an unauthenticated visit goes to sign-in and comes back after it', async ({ page }) => {
  await page.goto(`/runs/${seeded.runs.waiting}`);
  await expect(page).toHaveURL(/\/sign-in\?next=/);
  await shot(page, 'sign-in');
  await page.getByLabel('Token').fill(seeded.orgAdmin.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${seeded.runs.waiting}$`));
});

test('a wrong token is refused with a message, and no cookie is set', async ({ page, context }) => {
  await page.goto('/sign-in');
  await page.getByLabel('Token').fill('ars_user_not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('not accepted');
  expect((await context.cookies()).filter((c) => c.name === 'ars_session')).toEqual([]);
});

const roles = [
  { role: 'platform admin (admin token)', token: () => seeded.adminToken, admin: true },
  { role: 'org admin', token: () => seeded.orgAdmin.token, admin: false },
  { role: 'member', token: () => seeded.member.token, admin: false },
  { role: 'member of another organization', token: () => seeded.outsider.token, admin: false },
];

for (const r of roles) {
  test(`sign-in and sign-out as ${r.role}: an HttpOnly session cookie, ended by sign-out`, async ({ page, context }) => {
    await signIn(page, r.token());
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'ars_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie!.value).not.toBe(r.token()); // the session's own secret, never the token
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of ['Runs', 'Review', 'Agents', 'Dashboard', 'Audit']) await expect(nav.getByRole('link', { name })).toBeVisible();
    await expect(nav.getByRole('link', { name: 'Admin' })).toHaveCount(r.admin ? 1 : 0);
    // JavaScript cannot read the cookie (HttpOnly).
    expect(await page.evaluate(() => document.cookie)).not.toContain('ars_session');
    await signOut(page);
    // The old secret no longer opens anything, even sent by hand.
    const res = await page.request.get('/api/session', { headers: { cookie: `ars_session=${cookie!.value}` } });
    expect(res.status()).toBe(401);
    await page.goto('/agents');
    await expect(page).toHaveURL(/\/sign-in/);
  });
}

test('issue 40 item 6: a session that ends under an open page sends you to sign in, saying why', async ({ page }) => {
  await signIn(page, seeded.member.token);
  // Signed out elsewhere: the same session ended by another tab (the cookie is the page's own).
  const ended = await page.request.delete('/api/session', { headers: { origin: new URL(page.url()).origin } });
  expect(ended.status()).toBe(204);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fagents&reason=session-ended$/);
  await expect(page.getByRole('status')).toContainText('Your session has ended');
});

test('issue 40 item 6: a fresh visit without a session says nothing about an ended one', async ({ page }) => {
  await page.goto('/agents');
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fagents$/);
  await expect(page.getByText('Your session has ended')).toHaveCount(0);
});

test('issue 40 item 6: after a navigation, keyboard focus is on the new page, not left on <body>', async ({ page }) => {
  await signIn(page, seeded.member.token);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
  await expect(page).toHaveURL(/\/audit$/);
  await expect(page.locator('main#main')).toBeFocused();
  // Tab then goes to the page's first control, not back to the top of the document.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.closest('main')?.id ?? document.activeElement?.tagName)).toBe('main');
});
