// Ids in paths and bodies are checked before they reach SQL: a malformed uuid is "not found" (or a 400 where the
// caller names it in a body), never a database error.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
