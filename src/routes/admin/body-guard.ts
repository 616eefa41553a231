// Admin bodies are checked before schema validation so every refusal names its field (admin-api.md):
// - unknown top-level fields (the schema would only say "must NOT have additional properties");
// - NUL characters anywhere (PostgreSQL text and jsonb cannot hold them: a 400 beats a 500);
// - `__proto__`, `constructor` and `prototype` keys anywhere (deepMerge drops them later anyway, so they are
//   refused up front rather than lost silently).
// The admin context parses JSON itself, without secure-json-parse's blanket "forbidden prototype property"
// error, so that this guard can name the offending key. JSON.parse never sets a prototype: `__proto__` arrives
// as a plain own property and is refused here before any handler sees the body.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.ts';

const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 128;

export function installAdminBodyHandling(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined); // an empty DELETE/POST body is "no body"
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError('invalid_json', 'request body is not valid JSON'), undefined);
    }
  });
  app.addHook('preValidation', async (req) => {
    // No body on a write is an empty object, so a missing field is named ("body.name is required").
    if (req.body === undefined && (req.method === 'POST' || req.method === 'PATCH' || req.method === 'PUT')) req.body = {};
    if (req.body === undefined || req.body === null) return;
    const problem = unknownField(req.body, req.routeOptions.schema?.body) ?? deepProblem(req.body);
    if (problem) throw new ApiError('invalid_body', problem);
  });
}

function unknownField(body: unknown, schema: unknown): string | null {
  if (!isObject(body) || !isObject(schema) || schema.additionalProperties !== false) return null;
  const known = isObject(schema.properties) ? schema.properties : {};
  for (const key of Object.keys(body)) {
    if (RESERVED_KEYS.has(key)) return `${join('body', key)} is a reserved key`;
    if (!Object.hasOwn(known, key)) return `${join('body', key)} is not a known field`;
  }
  return null;
}

/** Iterative, so a hostile nesting depth cannot overflow the stack. */
function deepProblem(body: unknown): string | null {
  const stack: Array<[unknown, string, number]> = [[body, 'body', 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return `${path} must not contain NUL characters`;
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_DEPTH) return `${path} is nested more than ${MAX_DEPTH} levels deep`;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`, depth + 1]);
      } else {
        for (const key of Object.keys(value)) {
          if (key.includes('\u0000')) return `${path} has a key containing a NUL character`;
          if (RESERVED_KEYS.has(key)) return `${join(path, key)} is a reserved key`;
          stack.push([(value as Record<string, unknown>)[key], join(path, key), depth + 1]);
        }
      }
    }
  }
  return null;
}

/** `body.name`, or `body["odd key"]`; long keys are cut so an error never echoes a huge string back. */
function join(path: string, key: string): string {
  const shown = key.length > 64 ? `${key.slice(0, 64)}…` : key;
  return /^[A-Za-z_$][\w$-]*$/.test(shown) ? `${path}.${shown}` : `${path}[${JSON.stringify(shown)}]`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
