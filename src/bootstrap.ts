// The embedded default needs nothing installed: it keeps a generated master key and admin token in its data
// folder. A real deployment (DATABASE_URL) must configure both.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from './config.ts';

export interface Bootstrapped {
  masterKey: Buffer;
  adminToken: string;
  /** Set only on the start that generated the admin token: it is printed once. */
  generatedAdminToken: string | null;
  generatedMasterKey: boolean;
}

async function readOrCreate(file: string, make: () => string): Promise<{ value: string; created: boolean }> {
  try {
    return { value: (await readFile(file, 'utf8')).trim(), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const value = make();
    await writeFile(file, value + '\n', { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  }
}

export async function bootstrapSecrets(config: Config): Promise<Bootstrapped> {
  if (config.databaseUrl) {
    if (!config.masterKey || !config.adminToken) throw new Error('ARS_MASTER_KEY and ARS_ADMIN_TOKEN are required with DATABASE_URL');
    return { masterKey: config.masterKey, adminToken: config.adminToken, generatedAdminToken: null, generatedMasterKey: false };
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  let generatedMasterKey = false;
  let masterKey = config.masterKey;
  if (!masterKey) {
    const key = await readOrCreate(path.join(config.dataDir, 'master.key'), () => randomBytes(32).toString('base64'));
    masterKey = Buffer.from(key.value, 'base64');
    generatedMasterKey = key.created;
  }
  let adminToken = config.adminToken;
  let generatedAdminToken: string | null = null;
  if (!adminToken) {
    const token = await readOrCreate(path.join(config.dataDir, 'admin-token'), () => `ars_admin_${randomBytes(32).toString('base64url')}`);
    adminToken = token.value;
    if (token.created) generatedAdminToken = token.value;
  }
  return { masterKey, adminToken, generatedAdminToken, generatedMasterKey };
}
