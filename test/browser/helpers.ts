// What every browser spec does: sign in through the console's own form, read the seed, save a page's picture.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { fixture } from './harness/fixture.ts';

export const seeded = fixture();

/** Screenshots of every page (issue 14): test-results/screenshots, or ARS_SCREENSHOTS_DIR (docs/screenshots for the README). */
const SHOTS = process.env.ARS_SCREENSHOTS_DIR ?? 'test-results/screenshots';

export async function signIn(page: Page, token: string): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByLabel('Token')).toBeVisible();
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** The service's own JSON, read with a bearer token (the specs check what the console did through the API). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field
export async function apiGet(page: Page, url: string, token = seeded.adminToken): Promise<any> {
  const res = await page.request.get(url, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status(), url).toBe(200);
  return res.json();
}
