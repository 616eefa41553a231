// Issue 38 item 6: docs/api.md's "closed list" of error codes is the one in src/errors.ts, status for status, so the
// reference a caller reads cannot drift from what the service answers (it had missed three codes).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, statusOf } from '../../src/errors.ts';

const API_MD = readFileSync(path.resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

/** The `## Errors` table: each row's status and the backticked codes in it. */
function documentedCodes(): Map<string, number> {
  const section = API_MD.slice(API_MD.indexOf('\n## Errors'), API_MD.indexOf('\n## ', API_MD.indexOf('\n## Errors') + 1));
  const codes = new Map<string, number>();
  for (const row of section.matchAll(/^\| (\d{3}) \| (.*) \|$/gm)) {
    for (const code of row[2]!.matchAll(/`([a-z]+(?:_[a-z]+)*)`/g)) codes.set(code[1]!, Number(row[1]));
  }
  return codes;
}

describe('issue 38: docs/api.md lists exactly the error codes of errors.ts', () => {
  it('spec part 7: every code with its status, and no other', () => {
    const documented = documentedCodes();
    const expected = new Map(ERROR_CODES.map((code) => [code, statusOf(code)]));
    // A row's notes may quote a field in backticks (callback `url`); every snake_case name is a code.
    expect(Object.fromEntries([...documented].filter(([code]) => expected.has(code as never)))).toEqual(Object.fromEntries(expected));
    expect([...documented.keys()].filter((code) => code.includes('_') && !expected.has(code as never))).toEqual([]);
  });
});
