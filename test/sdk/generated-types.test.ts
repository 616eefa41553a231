// Issue 13 item 2: the SDK's types are generated from docs/openapi.json (`npm run sdk:types`) and committed, so a
// clone type-checks without generating. This fails when the committed file no longer matches the document.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

it('packages/sdk/src/generated/openapi.ts is what openapi-typescript makes of docs/openapi.json (run npm run sdk:types)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ars-sdk-types-'));
  try {
    const out = join(dir, 'openapi.ts');
    await promisify(execFile)(join('node_modules', '.bin', 'openapi-typescript'), ['docs/openapi.json', '-o', out]);
    const committed = await readFile('packages/sdk/src/generated/openapi.ts', 'utf8');
    expect(committed === (await readFile(out, 'utf8')), 'stale: run npm run sdk:types').toBe(true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
