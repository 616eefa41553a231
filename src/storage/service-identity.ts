// This deployment's identity (migration 0003): one row, created with the schema, shared by every instance that
// uses the database. It names this deployment's runs at runtimes other deployments may share.
import type { Queryable } from './db.ts';

export async function loadDeploymentId(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ deployment_id: string }>('SELECT deployment_id FROM service_identity');
  const id = rows[0]?.deployment_id;
  if (!id) throw new Error('service_identity has no row: the database was not migrated');
  return id;
}
