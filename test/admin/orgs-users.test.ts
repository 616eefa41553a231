// admin-api.md "Organizations, users, membership" and zones.md "Users reach the platform".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows } from '../helpers/fixtures.ts';
import { digest } from '../../src/lib/secrets.ts';
import { attributableUser } from '../../src/orgs/attribution.ts';
import { auditActions, call, expectInvalid, newOrg, ok } from './admin-helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MISSING = '00000000-0000-4000-8000-000000000000';
let emailSeq = 0;
const email = () => `user${++emailSeq}@example.test`;

describe('organizations', () => {
  it('admin-api.md: POST /orgs answers 201 {id, name, created_at}', async () => {
    const body = await ok(t, 201, 'POST', '/orgs', { name: 'Acme' });
    expect(Object.keys(body).sort()).toEqual(['created_at', 'id', 'name']);
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.name).toBe('Acme');
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    expect(await ok(t, 200, 'GET', `/orgs/${body.id}`)).toEqual(body);
  });

  it('admin-api.md: an unknown or malformed organization id is 404', async () => {
    for (const id of [MISSING, 'not-a-uuid', '1']) expect((await call(t, 'GET', `/orgs/${id}`)).statusCode).toBe(404);
  });
});

describe('users', () => {
  it('admin-api.md: POST /users answers 201 {id, email, name, platform_admin} with defaults', async () => {
    const e = email();
    const body = await ok(t, 201, 'POST', '/users', { email: e });
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), email: e, name: null, platform_admin: false });
    const admin = await ok(t, 201, 'POST', '/users', { email: email(), name: 'Ada', platform_admin: true });
    expect(admin).toMatchObject({ name: 'Ada', platform_admin: true });
    expect(await ok(t, 200, 'GET', `/users/${admin.id}`)).toEqual(admin);
  });

  it('admin-api.md: a duplicate email is 409, compared case-insensitively', async () => {
    await ok(t, 201, 'POST', '/users', { email: 'Dup@Example.test' });
    const before = await countRows(t, 'users');
    for (const e of ['Dup@Example.test', 'dup@example.TEST']) {
      const res = await call(t, 'POST', '/users', { email: e });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('conflict');
    }
    expect(await countRows(t, 'users')).toBe(before);
  });

  it('admin-api.md: bad user bodies are 400 naming the field', async () => {
    expectInvalid(await call(t, 'POST', '/users', {}), 'body.email');
    expectInvalid(await call(t, 'POST', '/users', { email: 'not an email' }), 'body.email');
    expectInvalid(await call(t, 'POST', '/users', { email: email(), platform_admin: 'yes' }), 'body.platform_admin');
    expectInvalid(await call(t, 'POST', '/users', { email: email(), role: 'admin' }), 'body.role');
  });
});

describe('membership', () => {
  it('admin-api.md: POST /orgs/{orgId}/members answers 201 {org_id, user_id, role}, role defaulting to member', async () => {
    const orgId = await newOrg(t);
    const user = await ok(t, 201, 'POST', '/users', { email: email() });
    const body = await ok(t, 201, 'POST', `/orgs/${orgId}/members`, { user_id: user.id });
    expect(body).toEqual({ org_id: orgId, user_id: user.id, role: 'member' });
    // The membership is what spec 4.1's attribution rule reads.
    expect(await attributableUser(t.db, orgId, user.id)).toBe(user.id);

    const other = await ok(t, 201, 'POST', '/users', { email: email() });
    expect(await ok(t, 201, 'POST', `/orgs/${orgId}/members`, { user_id: other.id, role: 'admin' })).toMatchObject({ role: 'admin' });
  });

  it('admin-api.md: adding an existing member is 409; unknown org or user is 404; a bad role is 400', async () => {
    const orgId = await newOrg(t);
    const user = await ok(t, 201, 'POST', '/users', { email: email() });
    await ok(t, 201, 'POST', `/orgs/${orgId}/members`, { user_id: user.id });
    expect((await call(t, 'POST', `/orgs/${orgId}/members`, { user_id: user.id })).statusCode).toBe(409);
    expect((await call(t, 'POST', `/orgs/${MISSING}/members`, { user_id: user.id })).statusCode).toBe(404);
    expect((await call(t, 'POST', `/orgs/nope/members`, { user_id: user.id })).statusCode).toBe(404);
    expect((await call(t, 'POST', `/orgs/${orgId}/members`, { user_id: MISSING })).statusCode).toBe(404);
    expectInvalid(await call(t, 'POST', `/orgs/${orgId}/members`, { user_id: 'bob' }), 'body.user_id');
    expectInvalid(await call(t, 'POST', `/orgs/${orgId}/members`, { user_id: user.id, role: 'owner' }), 'body.role');
  });

  it('admin-api.md: DELETE /orgs/{orgId}/members/{userId} answers 204, then 404', async () => {
    const orgId = await newOrg(t);
    const user = await ok(t, 201, 'POST', '/users', { email: email() });
    await ok(t, 201, 'POST', `/orgs/${orgId}/members`, { user_id: user.id });
    expect(await ok(t, 204, 'DELETE', `/orgs/${orgId}/members/${user.id}`)).toBeNull();
    expect(await attributableUser(t.db, orgId, user.id)).toBeNull();
    expect((await call(t, 'DELETE', `/orgs/${orgId}/members/${user.id}`)).statusCode).toBe(404);
    expect((await call(t, 'DELETE', `/orgs/${orgId}/members/not-a-uuid`)).statusCode).toBe(404);
    const actions = (await auditActions(t)).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['org.member_added', 'org.member_removed']));
  });
});

describe('user sign-in tokens', () => {
  it('zones.md: POST /users/{userId}/tokens answers 201 {id, token} once and keeps only a SHA-256 digest', async () => {
    const user = await ok(t, 201, 'POST', '/users', { email: email() });
    const body = await ok(t, 201, 'POST', `/users/${user.id}/tokens`, { name: 'laptop' });
    expect(Object.keys(body).sort()).toEqual(['id', 'token']);
    expect(body.token).toMatch(/^ars_user_[A-Za-z0-9_-]{43}$/);
    const { rows } = await t.db.query<{ token_digest: Uint8Array; name: string }>('SELECT token_digest, name FROM user_tokens WHERE id = $1', [body.id]);
    expect(Buffer.from(rows[0]!.token_digest).equals(digest(body.token))).toBe(true);
    expect(rows[0]!.name).toBe('laptop');
    // A name is optional, and so is the body.
    expect((await call(t, 'POST', `/users/${user.id}/tokens`)).statusCode).toBe(201);
    // Never shown again: not in the user, not in the audit log, not in the logs.
    const seen = JSON.stringify([await ok(t, 200, 'GET', `/users/${user.id}`), await auditActions(t)]) + t.logs.join('');
    expect(seen).not.toContain(body.token);
  });

  it('zones.md: DELETE /users/{userId}/tokens/{tokenId} revokes at once (204), then 404; audited both ways', async () => {
    const user = await ok(t, 201, 'POST', '/users', { email: email() });
    const { id } = await ok(t, 201, 'POST', `/users/${user.id}/tokens`, {});
    const other = await ok(t, 201, 'POST', '/users', { email: email() });
    expect((await call(t, 'DELETE', `/users/${other.id}/tokens/${id}`)).statusCode).toBe(404); // someone else's token
    expect(await ok(t, 204, 'DELETE', `/users/${user.id}/tokens/${id}`)).toBeNull();
    expect((await t.db.query('SELECT 1 FROM user_tokens WHERE id = $1', [id])).rows).toEqual([]);
    expect((await call(t, 'DELETE', `/users/${user.id}/tokens/${id}`)).statusCode).toBe(404);
    expect((await call(t, 'DELETE', `/users/${user.id}/tokens/xyz`)).statusCode).toBe(404);
    const entries = (await auditActions(t)).filter((a) => a.details.token_id === id);
    expect(entries.map((a) => a.action).sort()).toEqual(['user.token_created', 'user.token_revoked']);
    expect(entries[0]!.details).toEqual({ user_id: user.id, token_id: id });
  });

  it('admin-api.md: a token for an unknown user is 404; a bad name is 400', async () => {
    expect((await call(t, 'POST', `/users/${MISSING}/tokens`, {})).statusCode).toBe(404);
    expect((await call(t, 'POST', `/users/nope/tokens`, {})).statusCode).toBe(404);
    const user = await ok(t, 201, 'POST', '/users', { email: email() });
    expectInvalid(await call(t, 'POST', `/users/${user.id}/tokens`, { name: 7 }), 'body.name');
    expectInvalid(await call(t, 'POST', `/users/${user.id}/tokens`, { scope: 'all' }), 'body.scope');
  });
});
