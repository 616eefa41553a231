// The layering of src/, checked (README "How it is laid out"): a folder may import from its own rank or below,
// never from a rank above it. The one exception is the composition root: any module may import the *type* of the
// context (context.ts), which is erased at run time; only service.ts and the tests build one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Lowest first. Each entry is a top-level folder or file of src/. */
const RANKS: string[][] = [
  ['config.ts', 'errors.ts', 'lib', 'metrics', 'schemas', 'tracing'],
  ['storage'],
  ['rate-limits', 'runtimes', 'orgs'],
  ['agents'],
  ['runs'],
  ['sync', 'events', 'credentials'],
  ['webhooks', 'zones', 'admin'],
  ['background', 'http'],
  ['routes'],
  ['app.ts', 'bootstrap.ts', 'context.ts', 'service.ts', 'server.ts'],
];

const rankOf = new Map(RANKS.flatMap((names, rank) => names.map((n) => [n, rank] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

function topOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0]!;
}

interface Import {
  target: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^'";]*?from\s+'(\.{1,2}\/[^']+)'/gms)) {
    found.push({ target: path.resolve(path.dirname(file), m[3]!), typeOnly: m[2] !== undefined });
  }
  return found;
}

describe('architecture', () => {
  const files = sourceFiles(SRC);

  it('every top-level folder and file of src/ has a rank', () => {
    const tops = [...new Set(files.map(topOf))].sort();
    expect(tops.filter((t) => !rankOf.has(t))).toEqual([]);
  });

  it('no module imports from a layer above its own (the context type excepted)', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = rankOf.get(topOf(file))!;
      for (const { target, typeOnly } of importsOf(file)) {
        const top = topOf(target);
        if (typeOnly && top === 'context.ts') continue;
        const to = rankOf.get(top);
        if (to === undefined || to > from) upward.push(`${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('no source file is longer than 300 lines', () => {
    const long = files.map((f) => [path.relative(SRC, f), readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });

  it('no folder holds a single file', () => {
    const dirs = new Map<string, number>();
    for (const f of files) dirs.set(path.dirname(f), (dirs.get(path.dirname(f)) ?? 0) + 1);
    const lonely = [...dirs].filter(([dir, n]) => n === 1 && dir !== SRC).map(([dir]) => path.relative(SRC, dir));
    expect(lonely).toEqual([]);
  });
});

describe('architecture: per-instance state', () => {
  // House style 15: what an instance holds is a member of its context. A module-level `let`, or a module-level
  // Map/WeakMap/WeakSet or empty Set, is state every instance in the process would share. A Set built from a
  // list (`const HOP_BY_HOP = new Set([...])`) is a constant lookup table and stays allowed.
  const MUTABLE_BINDING = /^(?:export\s+)?(?:let|var)\s/;
  const MUTABLE_COLLECTION = /^(?:export\s+)?const\s+\w+\b.*?=\s*new\s+(?:(?:WeakMap|Map|WeakSet)\b|Set(?:<[^>]*>)?\(\s*\))/;

  /** Modules whose state mirrors something the process has once, whatever the instances, with the reason. */
  const PROCESS_WIDE: Readonly<Record<string, string>> = {
    'tracing/spans.ts': "OpenTelemetry's registry (tracer provider, context manager, propagator) is global to the process by design",
  };

  it('nothing module-level is mutable: no top-level let or var, no top-level Map, WeakMap, WeakSet or empty Set', () => {
    const found: string[] = [];
    for (const file of sourceFiles(SRC).filter((f) => !(path.relative(SRC, f) in PROCESS_WIDE))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (MUTABLE_BINDING.test(line) || MUTABLE_COLLECTION.test(line)) found.push(`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});

describe('architecture: exported constants are constant', () => {
  // Issue 38 item 3: an exported object or array is shared by every instance in the process, and any importer
  // (a test included) could change it: settings belong in the config, state in the context. An exported literal is
  // therefore read-only: `as const`, a Readonly/readonly type, or Object.freeze.
  const READONLY_TYPE = /^(?:Readonly(?:Array|Set|Map)?<|readonly\s)/;

  function isReadOnly(decl: ts.VariableDeclaration): boolean {
    let init = decl.initializer;
    if (!init) return true;
    if (ts.isSatisfiesExpression(init)) init = init.expression;
    if (ts.isAsExpression(init) && init.type.getText() === 'const') return true;
    if (ts.isCallExpression(init) && init.expression.getText() === 'Object.freeze') return true;
    if (!ts.isObjectLiteralExpression(init) && !ts.isArrayLiteralExpression(init)) return true; // not a literal
    return decl.type !== undefined && READONLY_TYPE.test(decl.type.getText());
  }

  it('no exported object or array literal is mutable', () => {
    const found: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      for (const statement of source.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        if (!statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
        for (const decl of statement.declarationList.declarations) {
          if (!isReadOnly(decl)) found.push(`${path.relative(SRC, file)}: ${decl.name.getText()}`);
        }
      }
    }
    expect(found).toEqual([]);
  });
});

describe('architecture: the runs table has one door', () => {
  // Issue 38 item 4: every statement on runs (and on run_transitions) lives in src/runs/, so a change to the run's
  // columns or indexes is made, and reviewed, in one folder.
  const RUNS_SQL = /\b(?:FROM|JOIN|UPDATE|INTO)\s+(?:runs|run_transitions)\b/;

  it('no module outside src/runs/ (and the migrations) writes SQL on runs', () => {
    const outside = sourceFiles(SRC)
      .filter((f) => !f.startsWith(path.join(SRC, 'runs') + path.sep) && !f.startsWith(path.join(SRC, 'storage', 'migrations') + path.sep))
      .filter((f) => RUNS_SQL.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(outside).toEqual([]);
  });
});
