// `npm run reseal`: rewrite every sealed secret under the current master key (reseal.ts), print the counts per
// table and column, and exit 0 only when every value is current. Embedded PGlite: stop the service first (one
// process at a time opens its data folder).
import { loadConfig } from '../config.ts';
import { SecretBox } from '../lib/secrets.ts';
import { loadMasterKeys } from './master-keys.ts';
import { openDb } from './open-db.ts';
import { resealSecrets } from './reseal.ts';

const config = loadConfig();
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
}
