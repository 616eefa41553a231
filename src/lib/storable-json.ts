// JSON text that PostgreSQL jsonb accepts. jsonb refuses two escapes JSON.stringify can emit: `\u0000` (NUL) and
// a lone UTF-16 surrogate (`\ud800`…). Output that a runtime or task hands us is stored, not rejected, so those are
// rewritten: NUL becomes the visible text `\u0000` (as in stored webhook snapshots), a lone surrogate becomes U+FFFD.
// JSON.stringify emits paired surrogates raw, so every surrogate escape in its output is a lone one.
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/gi;

export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (!text.includes('\\u')) return text;
  return text.replace(UNSTORABLE_ESCAPE, (_m, slashes: string, code: string) => slashes + (code === '0000' ? '\\\\u0000' : '\\ufffd'));
}

/** The value as it reads back after being stored (to compare a runtime's answer with what a run holds). */
export function storableValue(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(storableJson(value));
}
