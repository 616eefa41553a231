// Trigger.dev hands an output packet of 128 KiB or more back as a presigned object-store URL (runtimes.md ⚠). The
// object is the packet the task's worker uploaded, decoded by its content type as Trigger.dev's SDK decodes it
// (issue 36 item 1): `application/super+json` is superjson `{json, meta?}` — the value is `json` (what the API
// answers inline; `meta` only tells superjson how to revive Dates, Maps, BigInts, which JSON cannot hold anyway) —
// `text/plain` is a string returned as is, `application/json` (or no content type) plain JSON. The runtime chose
// that URL, so it is fetched like every URL a tenant or a runtime supplied (decisions.md "Outbound HTTP", issue 12
// finding 2): through the SSRF-guarded client (ctx.outbound), https only (plain http only to a host on
// ARS_OUTBOUND_ALLOW_HOSTS), addresses checked after DNS resolution, no redirects, at most `maxJsonBytes` read,
// and never with our bearer key.
import type { OutboundClient } from '../lib/safe-http.ts';
import type { Outcome, RuntimeFailure } from './runtime-adapter.ts';
import { parseJson, transportFailure, type RuntimeHttp } from './http.ts';

const WHAT = 'Trigger.dev output download';

/** A refusal is final (the run fails with its reason); a failure is transient (the next poll asks again). */
export type PresignedOutput = { output: unknown } | { refused: string };

export async function fetchPresignedOutput(
  http: RuntimeHttp, outbound: OutboundClient | null, presignedUrl: string,
): Promise<Outcome<PresignedOutput>> {
  const refused = (why: string): Outcome<PresignedOutput> => ({ ok: true, value: { refused: `the task's output could not be fetched: ${why}` } });
  let url: URL;
  try {
    url = new URL(presignedUrl);
  } catch {
    return refused('the presigned URL is malformed');
  }
  if (!outbound) return refused('no SSRF-guarded client is configured to fetch it');
  const plainHttpAllowed = url.protocol === 'http:' && outbound.isAllowListed(url.hostname);
  if (url.protocol !== 'https:' && !plainHttpAllowed) {
    return refused('the presigned URL is not https (plain http only to a host on ARS_OUTBOUND_ALLOW_HOSTS)');
  }
  const res = await http.measured(WHAT, () => download(outbound, url, http));
  if (!res.ok) return res.failure.retryable ? res : refused(res.failure.message);
  const { status, text, contentType } = res.value;
  if (status >= 300 && status < 400) return refused('the object store answered a redirect, which is never followed');
  // An expired signature (403) or a store blip: the next poll reads the run again, with a fresh URL.
  if (status !== 200) return { ok: false, failure: { kind: 'unreachable', message: `${WHAT}: HTTP ${status}`, httpStatus: status, retryable: true } };
  return decodePacket(text, contentType, refused);
}

/** The worker's packet as Trigger.dev's SDK reads it (parsePacket): by its content type. */
function decodePacket(text: string, contentType: string, refused: (why: string) => Outcome<PresignedOutput>): Outcome<PresignedOutput> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/plain') return { ok: true, value: { output: text } };
  if (type === 'application/super+json') {
    const parsed = parseJson(text);
    if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || !('json' in parsed.value)) {
      return refused('the object store answered a superjson packet without its `json` part');
    }
    return { ok: true, value: { output: (parsed.value as { json: unknown }).json ?? null } };
  }
  // No content type: the SDK reads it as JSON too. Any other type is a packet this service cannot read.
  if (type === '' || type === 'application/json') {
    const parsed = parseJson(text);
    return parsed.ok ? { ok: true, value: { output: parsed.value } } : refused('the object store answered a body that is not JSON');
  }
  return refused(`the object store answered content type ${type.slice(0, 100)}, which is not a task output packet`);
}

async function download(outbound: OutboundClient, url: URL, http: RuntimeHttp): Promise<Outcome<{ status: number; text: string; contentType: string }>> {
  const { headersMs, bodyMs } = http.timeouts;
  try {
    const res = await outbound.fetch(url.href, {
      method: 'GET',
      headers: { accept: 'application/super+json, application/json, text/plain' },
      timeoutMs: headersMs + bodyMs,
      maxResponseBytes: http.maxJsonBytes,
    });
    return { ok: true, value: { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') ?? '' } };
  } catch (err) {
    return { ok: false, failure: downloadFailure(err, http.maxJsonBytes) };
  }
}

/** Refusals of the guard are final; timeouts and network failures are retried by the next poll. */
function downloadFailure(err: unknown, maxBytes: number): RuntimeFailure {
  const { code, name, message } = (err ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  if (code === 'ARS_OUTBOUND_BLOCKED') {
    return { kind: 'rejected', retryable: false, message: 'the presigned URL resolves to an address that is not public (private, loopback, link-local; ARS_OUTBOUND_ALLOW_HOSTS lists exceptions)' };
  }
  if (code === 'ARS_OUTBOUND_TOO_LARGE') return { kind: 'rejected', retryable: false, message: `the output is larger than ${maxBytes} bytes` };
  if (err instanceof TypeError && typeof message === 'string' && message.startsWith('outbound fetch refused')) {
    return { kind: 'rejected', retryable: false, message: `the presigned URL was refused (${message.replace(/^outbound fetch refused: /, '')})` };
  }
  if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout', retryable: true, message: `${WHAT}: no complete answer in time` };
  return transportFailure(err, WHAT);
}
