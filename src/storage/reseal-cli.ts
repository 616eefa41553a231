// `npm run reseal`: rewrite every sealed secret under the current master key (reseal.ts), print the counts per
// table and column, and exit 0 only when every value is current. Embedded PGlite: stop the service first (one
// process at a time opens its data folder).
import { loadConfig, ConfigError } from '../config.ts';
import { StartupError } from '../lib/startup-error.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { SecretBox } from '../lib/secrets.ts';
import { loadMasterKeys } from './master-keys.ts';
import { openDb } from './open-db.ts';
import { resealSecrets } from './reseal.ts';

const config = (() => {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
})();
/** Embedded: the data folder's lock, held while resealing (it refuses while the service runs on that folder). */
const lock = config.databaseUrl
  ? null
  : await lockDataDir(config.dataDir, (line) => console.error(line)).catch((err: unknown) => {
      if (!(err instanceof StartupError)) throw err;
      console.error(err.message);
      process.exit(2);
    });
const { keyring } = await loadMasterKeys(config, false);
const box = new SecretBox(keyring);
const db = await openDb(config);
try {
  console.log(`sealing with master key "${box.currentKeyId}"; keys that open: ${keyring.keys.map((k) => k.id).join(', ')}`);
  const report = await resealSecrets(db, box);
  console.table(report.counts.map(({ table, column, ...n }) => ({ column: `${table}.${column}`, ...n })));
  for (const failure of report.failures) console.error(`does not open: ${failure}`);
  if (report.complete) console.log(`every sealed secret is under "${report.keyId}": keys other than it may now be removed`);
  else console.log('not complete: fix the values that do not open, or run again for the busy ones');
  process.exitCode = report.complete ? 0 : 1;
} finally {
  await db.close();
  await lock?.release();
}
