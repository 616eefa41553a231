// PostgreSQL cannot store every JSON value JavaScript can parse: jsonb and text refuse U+0000 ("unsupported
// Unicode escape sequence"), jsonb refuses an unpaired UTF-16 surrogate ("invalid input syntax for type json"), and
// very deep nesting overflows the stack of JSON.stringify here or of the database's parser (seen at ~5000 levels
// on both PGlite and PostgreSQL). Left alone, each of those is a 500 at INSERT time. A number beyond the double
// range (1e400) is parsed as Infinity, which JSON.stringify writes as null: stored, it would silently be another
// value. This is the one place that knows them, with two answers:
// - a request body the caller controls is refused up front, naming the field (`findUnstorable`, used by the app's
//   one preValidation hook, http/storable-body.ts: decisions.md "Errors", never a 5xx for bad input);
// - what a runtime, task or webhook sender hands us is stored, not refused, so it is rewritten (`storableJson`,
//   `stripNul`) or, past MAX_JSON_DEPTH, not carried (`nestsTooDeep`).
import { isPlainObject } from './merge.ts';

/** The one nesting limit: deeper than any real payload, far below where JSON.stringify or the database give out. */
export const MAX_JSON_DEPTH = 512;

export interface Unstorable {
  /** Where, in the error handler's notation: `body.input.items.3.name`. */
  path: string;
  problem: string;
}

const NUL = '\u0000';
const VISIBLE_NUL = '\\u0000';
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringProblem(s: string): string | null {
  if (s.includes(NUL)) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate, which cannot be stored';
  return null;
}

/** A key as it may appear in an error message: no control characters, bounded length. */
function label(key: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = key.replace(/[\u0000-\u001f\u007f\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}

interface Frame {
  value: unknown;
  parent: Frame | null;
  /** The key or index this value sits under; an object key is checked too (jsonb keys are strings like any other). */
  key: string | number | null;
  depth: number;
}

/** Built only for the one frame reported; long paths keep their start (where to look) and are cut. */
function pathOf(frame: Frame, root: string): string {
  const parts: string[] = [];
  for (let f: Frame | null = frame; f && f.key !== null; f = f.parent) parts.push(typeof f.key === 'number' ? String(f.key) : label(f.key));
  const path = [root, ...parts.reverse()].join('.');
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/**
 * The first place (in document order) in a parsed JSON value that the database cannot store, or null.
 * Iterative, so a hostile nesting depth cannot overflow the stack here either.
 */
export function findUnstorable(value: unknown, root = 'body'): Unstorable | null {
  const stack: Frame[] = [{ value, parent: null, key: null, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (typeof frame.key === 'string') {
      const keyProblem = stringProblem(frame.key);
      if (keyProblem) return { path: pathOf(frame, root), problem: `has a key that ${keyProblem}` };
    }
    const v = frame.value;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) return { path: pathOf(frame, root), problem };
      continue;
    }
    if (typeof v === 'number' && !Number.isFinite(v)) return { path: pathOf(frame, root), problem: 'is a number too large to store (beyond the range of a double)' };
    if (typeof v !== 'object' || v === null) continue;
    if (frame.depth >= MAX_JSON_DEPTH) return { path: pathOf(frame, root), problem: `nests deeper than ${MAX_JSON_DEPTH} levels` };
    const depth = frame.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: frame, key: i, depth });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]!], parent: frame, key: keys[i]!, depth });
    }
  }
  return null;
}

/** Whether a value nests past MAX_JSON_DEPTH (the depth part of findUnstorable alone). Iterative, like it. */
export function nestsTooDeep(root: unknown): boolean {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) return true;
    for (const child of Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

// jsonb refuses two escapes JSON.stringify can emit: `\u0000` (NUL) and a lone surrogate (`\ud800`…). NUL becomes
// the visible text `\u0000` (as stripNul does), a lone surrogate becomes U+FFFD. JSON.stringify emits paired
// surrogates raw, so every surrogate escape in its output is a lone one. (A number beyond the double range is
// already null in JSON.stringify's output.)
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/gi;

/** JSON text that PostgreSQL jsonb accepts, for output a runtime or task hands us (stored, never refused). */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (!text.includes('\\u')) return text;
  return text.replace(UNSTORABLE_ESCAPE, (_m, slashes: string, code: string) => slashes + (code === '0000' ? '\\\\u0000' : '\\ufffd'));
}

/** The value as it reads back after being stored (to compare a runtime's answer with what a run holds). */
export function storableValue(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(storableJson(value));
}

/**
 * NUL made visible in a stored webhook snapshot: it becomes the six characters `\u0000` rather than vanishing, so
 * the snapshot still shows that something was there (tasks always receive the original). Deep copy-on-write:
 * the very same value (no allocation) when it holds no NUL, otherwise new arrays/objects only along the paths
 * that changed. Only strings, arrays and plain objects are looked into. Recursion depth follows the value's
 * nesting, like JSON.stringify, which storage needs anyway.
 */
export function stripNul<T>(value: T): T {
  return strip(value) as T;
}

function strip(value: unknown): unknown {
  if (typeof value === 'string') return value.includes(NUL) ? value.replaceAll(NUL, VISIBLE_NUL) : value;
  if (Array.isArray(value)) return stripArray(value);
  if (isPlainObject(value)) return stripObject(value);
  return value;
}

function stripArray(input: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    const stripped = strip(item);
    if (out === undefined && stripped !== item) out = input.slice(0, i);
    out?.push(stripped);
  }
  return out ?? input;
}

function stripObject(input: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(input);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const item = input[key];
    const strippedKey = strip(key) as string;
    const stripped = strip(item);
    if (out === undefined && (strippedKey !== key || stripped !== item)) {
      out = Object.getPrototypeOf(input) === null ? Object.create(null) : {};
      for (let j = 0; j < i; j++) setOwn(out as Record<string, unknown>, keys[j] as string, input[keys[j] as string]);
    }
    if (out !== undefined) setOwn(out, strippedKey, stripped);
  }
  return out ?? input;
}

/** defineProperty, not assignment: a "__proto__" key must stay a data property, never set a prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
