// The master keys sealed secrets are opened and sealed with: the configured ones (ARS_MASTER_KEY or
// ARS_MASTER_KEYS), or the embedded default's master.key in the data folder, generated on its first start.
import { readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config.ts';
import { singleKeyring, type Keyring } from '../lib/secrets.ts';

/** A file of the data folder, made by `make` (mode 0600) when it does not exist yet. */
export async function readOrCreate(file: string, make: () => string): Promise<{ value: string; created: boolean }> {
  try {
    return { value: (await readFile(file, 'utf8')).trim(), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const value = make();
    await writeFile(file, value + '\n', { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  }
}

/**
 * `create`: the service's start may generate master.key (embedded only); maintenance commands only read it.
 * The embedded key has the id "default", as a single ARS_MASTER_KEY has.
 */
export async function loadMasterKeys(config: Pick<Config, 'masterKeys' | 'databaseUrl' | 'dataDir'>, create: boolean): Promise<{ keyring: Keyring; generated: boolean }> {
  if (config.masterKeys) return { keyring: config.masterKeys, generated: false };
  if (config.databaseUrl) throw new Error('ARS_MASTER_KEY or ARS_MASTER_KEYS is required with DATABASE_URL');
  const file = path.join(config.dataDir, 'master.key');
  if (!create) {
    const value = await readFile(file, 'utf8').catch(() => null);
    if (value === null) throw new Error(`no master key: set ARS_MASTER_KEY(S), or start the service once to generate ${file}`);
    return { keyring: singleKeyring(Buffer.from(value.trim(), 'base64')), generated: false };
  }
  const key = await readOrCreate(file, () => randomBytes(32).toString('base64'));
  return { keyring: singleKeyring(Buffer.from(key.value, 'base64')), generated: key.created };
}
