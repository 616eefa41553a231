// PostgreSQL jsonb cannot hold U+0000 in a string (keys or values), so anything stored as jsonb passes through
// here first. A NUL becomes the visible six characters `\u0000` rather than vanishing, so the stored snapshot
// still shows that something was there. Only storage copies are altered; tasks always receive the original.
const NUL = '\u0000';
const VISIBLE_NUL = '\\u0000';

/**
 * Deep copy-on-write: returns the very same value (no allocation) when it holds no NUL, and otherwise new
 * arrays/objects only along the paths that changed. Only strings, arrays and plain objects are looked into.
 * Recursion depth follows the value's nesting, like JSON.stringify, which storage needs anyway.
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
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
