// `npm run migrate`: apply pending migrations to DATABASE_URL (or the embedded data folder) and exit.
import { loadConfig } from '../config.ts';
import { migrate } from './migrate.ts';
import { openDb } from './open-db.ts';

const config = loadConfig();
const db = await openDb(config);
try {
  const applied = await migrate(db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await db.close();
}
