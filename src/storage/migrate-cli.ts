// `npm run migrate`: apply pending migrations to DATABASE_URL (or the embedded data folder) and exit. On the embedded
// database it holds the data folder's lock while it works: it refuses while the service runs on that folder.
import { loadConfig, ConfigError } from '../config.ts';
import { StartupError } from '../lib/startup-error.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { migrate } from './migrate.ts';
import { openDb } from './open-db.ts';

try {
  const config = loadConfig();
  const lock = config.databaseUrl ? null : await lockDataDir(config.dataDir, (line) => console.error(line));
  try {
    const db = await openDb(config);
    try {
      const applied = await migrate(db);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    } finally {
      await db.close();
    }
  } finally {
    await lock?.release();
  }
} catch (err) {
  if (!(err instanceof ConfigError || err instanceof StartupError)) throw err;
  console.error(err.message);
  process.exitCode = 2;
}
