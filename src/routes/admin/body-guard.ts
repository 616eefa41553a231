// Admin bodies are checked before schema validation so every refusal names its field (admin-api.md):
// - what PostgreSQL cannot store, anywhere (the app-wide hook of http/storable-body.ts, which runs first);
// - unknown top-level fields (the schema would only say "must NOT have additional properties");
// - `__proto__`, `constructor` and `prototype` keys anywhere (deepMerge drops them later anyway, so they are
//   refused up front rather than lost silently).
// The admin context parses JSON itself, without secure-json-parse's blanket "forbidden prototype property"
// error, so that this guard can name the offending key. JSON.parse never sets a prototype: `__proto__` arrives
// as a plain own property and is refused here before any handler sees the body.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.ts';

const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

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
    const problem = unknownField(req.body, req.routeOptions.schema?.body) ?? reservedKey(req.body);
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

/** Iterative like findUnstorable, which has bounded the depth by the time this runs (it runs first). */
function reservedKey(body: unknown): string | null {
  const stack: Array<[unknown, string]> = [[body, 'body']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`]);
    } else {
      for (const key of Object.keys(value)) {
        if (RESERVED_KEYS.has(key)) return `${join(path, key)} is a reserved key`;
        stack.push([(value as Record<string, unknown>)[key], join(path, key)]);
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
