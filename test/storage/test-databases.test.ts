// The suite's own databases (test/helpers/test-db.ts): on PGlite each starts as a copy of one migrated once per run
// (test/global-setup.ts). A copy must be the whole schema, and a deployment of its own: migration 0003 draws the
// deployment id that names this deployment's runs at a shared runtime, and every copy would otherwise carry the
// template's.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from '../helpers/test-db.ts';
import { migrationFiles, pendingMigrations } from '../../src/storage/migrate.ts';
import { loadDeploymentId } from '../../src/storage/service-identity.ts';

describe(`test databases (${onPostgres ? 'PostgreSQL' : 'PGlite, copies of the migrated template'})`, () => {
  const made: TestDb[] = [];
  afterAll(async () => {
    for (const t of made) await t.drop();
  });

  it('have every migration applied, and a deployment id each', async () => {
    made.push(await createTestDb(), await createTestDb());
    const files = await migrationFiles();
    for (const { db } of made) expect(await pendingMigrations(db, files)).toEqual([]);
    const [a, b] = await Promise.all(made.map(({ db }) => loadDeploymentId(db)));
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).not.toBe(a);
  });
});
