// Once per `vitest run`: a PGlite data directory with every migration applied, dumped to a file that each test's
// in-memory database starts from (test-db.ts). Starting PGlite from a dump takes about 0.8 s; an empty cluster
// takes 3-5 s (its initdb), and the PGlite suite makes hundreds of databases. A run on PostgreSQL
// (TEST_DATABASE_URL) makes none, and gets no template.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openPGlite } from '../src/storage/pglite-db.ts';
import { migrate } from '../src/storage/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PGlite data directory, as a tar file (dumpDataDir). */
    pgliteTemplate?: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TEST_DATABASE_URL) return undefined;
  const dir = await mkdtemp(path.join(tmpdir(), 'ars-pglite-template-'));
  const db = await openPGlite(path.join(dir, 'pgdata'));
  await migrate(db);
  await db.close();
  const pg = await PGlite.create(path.join(dir, 'pgdata'));
  const dump = await pg.dumpDataDir('none');
  await pg.close();
  const file = path.join(dir, 'migrated.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  return () => rm(dir, { recursive: true, force: true });
}
