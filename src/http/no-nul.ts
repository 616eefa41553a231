// PostgreSQL cannot store every JSON value JavaScript can parse: jsonb and text refuse U+0000 ("unsupported
// Unicode escape sequence"), jsonb refuses an unpaired UTF-16 surrogate ("invalid input syntax for type json"), and
// very deep nesting overflows the stack of JSON.stringify here or of the database's parser (seen at ~5000 levels
// on both PGlite and PostgreSQL). Left alone, each of those is a 500 at INSERT time; this finds them up front so
// the route answers a 4xx naming the field and writes nothing (decisions.md "Errors": never a 5xx for bad input).
//
// Use as a route's preValidation hook (`preValidation: rejectUnstorableBody`); it answers with the route's
// validation code (400 invalid_body, or 422 where `config.validationCode` says so).
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';

/** Deeper than any real payload; far below where JSON.stringify or the database parser give out. */
export const MAX_JSON_DEPTH = 512;

export interface Unstorable {
  /** Where, in the error handler's notation: `body.input.items.3.name`. */
  path: string;
  problem: string;
}

const NUL = '\u0000';
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

/** preValidation hook: 4xx naming the field when the parsed body holds something the database cannot store. */
export async function rejectUnstorableBody(req: FastifyRequest): Promise<void> {
  const found = findUnstorable(req.body);
  if (found) throw new ApiError(req.routeOptions.config.validationCode ?? 'invalid_body', `${found.path} ${found.problem}`);
}
