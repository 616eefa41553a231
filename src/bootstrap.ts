// The embedded default needs nothing installed: it keeps a generated master key and admin token in its data
// folder. A real deployment (DATABASE_URL) must configure both.
import { mkdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from './config.ts';
import type { Keyring } from './lib/secrets.ts';
import { loadMasterKeys, readOrCreate } from './storage/master-keys.ts';

export interface Bootstrapped {
  masterKeys: Keyring;
  adminToken: string;
  /** Set only on the start that generated the admin token: it is printed once. */
  generatedAdminToken: string | null;
  generatedMasterKey: boolean;
}

export async function bootstrapSecrets(config: Config): Promise<Bootstrapped> {
  if (config.databaseUrl) {
    if (!config.masterKeys || !config.adminToken) throw new Error('ARS_MASTER_KEY(S) and ARS_ADMIN_TOKEN are required with DATABASE_URL');
    return { masterKeys: config.masterKeys, adminToken: config.adminToken, generatedAdminToken: null, generatedMasterKey: false };
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const { keyring, generated } = await loadMasterKeys(config, true);
  let adminToken = config.adminToken;
  let generatedAdminToken: string | null = null;
  if (!adminToken) {
    const token = await readOrCreate(path.join(config.dataDir, 'admin-token'), () => `ars_admin_${randomBytes(32).toString('base64url')}`);
    adminToken = token.value;
    if (token.created) generatedAdminToken = token.value;
  }
  return { masterKeys: keyring, adminToken, generatedAdminToken, generatedMasterKey: generated };
}
