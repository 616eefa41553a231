// Issue 38 item 5: a browser or edge bundle of `@agent-run-service/sdk` must not pull a Node built-in, so nothing
// the root entry imports, however indirectly, is one; the webhook verifier, which needs node:crypto, has its own
// subpath (`@agent-run-service/sdk/webhooks`). The graph is read from the sources with TypeScript's own parser.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../packages/sdk/src');
const BUILTINS = new Set(builtinModules);

/** Every module specifier reachable from `entry` (relative imports followed), by the file that imports it. */
function importGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = [path.join(SRC, entry)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const specifiers = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
    graph.set(file, specifiers);
    for (const s of specifiers) if (s.startsWith('.')) pending.push(path.resolve(path.dirname(file), s));
  }
  return graph;
}

function builtinsIn(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, specifiers]) =>
    specifiers.filter((s) => s.startsWith('node:') || BUILTINS.has(s.split('/')[0]!)).map((s) => `${path.relative(SRC, file)}: ${s}`));
}

describe('issue 38 item 5: the SDK\'s entries and Node built-ins', () => {
  it('the root entry reaches no Node built-in, whatever the depth', () => {
    const graph = importGraph('index.ts');
    expect([...graph.keys()].map((f) => path.relative(SRC, f)).sort()).toEqual(
      ['agent-run-client.ts', 'api-types.ts', 'errors.ts', 'generated/openapi.ts', 'http.ts', 'index.ts', 'task-client.ts'],
    );
    expect(builtinsIn(graph)).toEqual([]);
  });

  it('the webhooks entry is where node:crypto is (so the check above would see it if it came back)', () => {
    expect(builtinsIn(importGraph('webhooks.ts'))).toEqual(['webhooks.ts: node:crypto']);
  });
});
