// Spec 4.1: the caller's input is merged over the agent's saved default input, the caller's values winning.
// Plain objects merge recursively; anything else (arrays included) replaces. Keys that could reach a prototype
// are skipped, and the result is built on fresh objects, so the merge cannot be polluted.
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function deepMerge(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override === undefined ? base : override;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base)) if (!FORBIDDEN.has(k)) out[k] = v;
  for (const [k, v] of Object.entries(override)) {
    if (FORBIDDEN.has(k)) continue;
    out[k] = Object.hasOwn(out, k) ? deepMerge(out[k], v) : v;
  }
  return out;
}
