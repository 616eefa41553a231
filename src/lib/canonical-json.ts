// One text per JSON value, whatever order its object keys were written in: a request fingerprint
// (runs/idempotency.ts) compares what two bodies mean, not how they were spelled. Arrays keep their order;
// undefined members are left out (objects) or null (arrays), as JSON.stringify does.
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
