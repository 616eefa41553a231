// Personal sign-in tokens for zone tests, stored the way the admin API stores them (SHA-256 digest only).
import { randomBytes, randomUUID } from 'node:crypto';
import { digest } from '../../src/lib/secrets.ts';
import type { TestApp } from '../helpers/test-app.ts';

export async function seedUserToken(t: TestApp, userId: string): Promise<{ id: string; token: string }> {
  const id = randomUUID();
  const token = `ars_user_${randomBytes(32).toString('base64url')}`;
  await t.db.query('INSERT INTO user_tokens (id, user_id, name, token_digest) VALUES ($1, $2, $3, $4)', [id, userId, 'test', digest(token)]);
  return { id, token };
}
