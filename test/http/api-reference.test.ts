// Issue 38 items 4 and 6: each error code's status and meaning live in src/errors.ts, and docs/api.md's "closed
// list" of error codes is made from it (`npm run openapi`), so the reference a caller reads cannot drift from what
// the service answers (it had missed three codes).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorTable, statusOf } from '../../src/errors.ts';

const API_MD = readFileSync(path.resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

/** The `## Errors` section's table, as written. */
function documentedTable(): string {
  const section = API_MD.slice(API_MD.indexOf('\n## Errors'), API_MD.indexOf('\n## ', API_MD.indexOf('\n## Errors') + 1));
  return [...section.matchAll(/^\|.*\|$/gm)].map((m) => m[0]).join('\n');
}

describe('issue 38: docs/api.md lists exactly the error codes of errors.ts', () => {
  it('spec part 7: the table is the one errors.ts makes (run npm run openapi after changing a code)', () => {
    expect(documentedTable()).toBe(errorTable());
  });

  it('every code appears once, in the row of its status', () => {
    const rows = errorTable().split('\n').slice(2);
    for (const code of ERROR_CODES) {
      const holding = rows.filter((row) => row.includes(`\`${code}\``));
      expect(holding).toEqual([expect.stringMatching(new RegExp(`^\\| ${statusOf(code)} \\|`))]);
    }
  });
});
