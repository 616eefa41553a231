// `npm run openapi`: writes docs/openapi.json, the OpenAPI document the app generates from its route schemas, with
// the default configuration (servers: http://localhost:8080) so the file does not depend on who runs the script.
// test/http/openapi.test.ts fails when the committed file differs from what the app generates. It also writes the
// "Errors" table of docs/api.md from src/errors.ts (test/http/api-reference.test.ts holds the two equal).
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContext, stopContext } from '../src/context.ts';
import { documentText } from '../src/http/openapi-document.ts';
import { errorTable } from '../src/errors.ts';
import { singleKeyring } from '../src/lib/secrets.ts';
import { migrate } from '../src/storage/migrate.ts';
import { openPGlite } from '../src/storage/pglite-db.ts';

const OPENAPI_FILE = path.resolve(import.meta.dirname, '../docs/openapi.json');
const API_MD = path.resolve(import.meta.dirname, '../docs/api.md');

// The table is the one block of lines starting `| Status | Codes |` in docs/api.md.
const apiMd = await readFile(API_MD, 'utf8');
const table = /^\| Status \| Codes \|\n(?:\|.*\|\n)*/m;
if (!table.test(apiMd)) throw new Error('docs/api.md has no "| Status | Codes |" table');
await writeFile(API_MD, apiMd.replace(table, `${errorTable()}\n`));

const db = await openPGlite(); // in memory: the app needs a database to start, the document reads nothing from it
await migrate(db);
const ctx = await createContext({
  config: loadConfig({ LOG_LEVEL: 'warn' }),
  db,
  masterKeys: singleKeyring(randomBytes(32)),
  adminToken: randomBytes(24).toString('hex'),
});
const app = await buildApp(ctx);
await app.ready();
await writeFile(OPENAPI_FILE, documentText(app));
await app.close();
await stopContext(ctx);
await db.close();
console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
