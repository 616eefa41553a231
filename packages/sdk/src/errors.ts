// One error type for every refusal the service answers: its body is `{error, code, requestId}` plus `runId` where
// a run exists (the service's decisions.md "Errors"), and a 429 or 503 says when to come back in Retry-After.
import type { ErrorCode } from './api-types.ts';

export class AgentRunError extends Error {
  override readonly name = 'AgentRunError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: ErrorCode,
    /** The service's x-request-id: quote it when asking about this call. */
    readonly requestId: string | undefined,
    /** Seconds the service asked to wait (429, 503). */
    readonly retryAfter?: number,
    /** The run the refusal is about, when one exists (a failed synchronous run, a download already streamed). */
    readonly runId?: number,
  ) {
    super(message);
  }
}

/** Builds the error from a non-2xx answer, reading its body (the caller must not have read it). */
export async function errorFromResponse(res: Response): Promise<AgentRunError> {
  const text = await res.text().catch(() => '');
  const body = parseObject(text);
  const requestId = stringField(body, 'requestId') ?? res.headers.get('x-request-id') ?? undefined;
  const runId = typeof body?.runId === 'number' ? body.runId : undefined;
  const code = stringField(body, 'code') as ErrorCode | undefined;
  const message = stringField(body, 'error') ?? `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
  return new AgentRunError(message, res.status, code ?? 'unexpected_response', requestId, retryAfterSeconds(res), runId);
}

/** Retry-After in seconds; the HTTP-date form is accepted too (a proxy may send it). */
export function retryAfterSeconds(res: Response): number | undefined {
  const value = res.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function stringField(body: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = body?.[key];
  return typeof value === 'string' ? value : undefined;
}
