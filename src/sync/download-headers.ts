// Response headers and stored metadata of a streamed download (spec 4.3, 2.2 "File-download metadata").
// Content-Type and Content-Disposition pass through verbatim; undici hands header values over as latin1, so
// setting them back writes the runtime's exact bytes. A value Node would refuse (control characters) is treated
// as missing rather than failing the response.

/** Node's own check for header values (http.validateHeaderValue): tab, printable ASCII and obs-text. */
const SENDABLE = /^[\t\x20-\x7e\x80-\xff]*$/;

const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf', 'application/zip': 'zip', 'application/gzip': 'gz', 'application/x-tar': 'tar',
  'application/json': 'json', 'application/xml': 'xml', 'text/xml': 'xml', 'text/csv': 'csv', 'text/plain': 'txt',
  'text/html': 'html', 'text/markdown': 'md', 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif',
  'image/webp': 'webp', 'image/svg+xml': 'svg', 'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'video/mp4': 'mp4',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.ms-excel': 'xls', 'application/msword': 'doc', 'application/octet-stream': 'bin',
};

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export interface DownloadHeaders {
  /** What the caller receives (lowercased names). */
  headers: Record<string, string>;
  filename: string;
  mimeType: string;
}

/** spec 4.3's response headers from the runtime's, plus the metadata stored as output_data. */
export function downloadHeaders(runId: number, upstream: Record<string, string>): DownloadHeaders {
  const contentType = sendable(upstream['content-type']) ?? DEFAULT_CONTENT_TYPE;
  const mimeType = contentType.split(';')[0]!.trim().toLowerCase() || DEFAULT_CONTENT_TYPE;
  const derived = `run-${runId}.${EXTENSIONS[mimeType] ?? 'bin'}`;
  const disposition = sendable(upstream['content-disposition']);
  const headers: Record<string, string> = {
    'content-type': contentType,
    'content-disposition': disposition ?? `attachment; filename="${derived}"`,
    'x-run-id': String(runId),
    'cache-control': 'no-store',
    // The file is served from the service's origin: never sniffed, never able to run script here.
    'x-content-type-options': 'nosniff',
    'content-security-policy': 'sandbox',
  };
  const length = upstream['content-length'];
  if (length !== undefined && /^\d{1,15}$/.test(length)) headers['content-length'] = length;
  return { headers, filename: (disposition && filenameFrom(disposition)) || derived, mimeType };
}

/** spec 4.3: `X-Outputs` is stored when it is a non-negative integer; anything else is dropped silently. */
export function outputsHeader(value: string | undefined): number | null {
  if (value === undefined || !/^\s*\d{1,15}\s*$/.test(value)) return null;
  return Number(value.trim());
}

function sendable(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' && SENDABLE.test(value) ? value : undefined;
}

/** The file name a Content-Disposition names (RFC 6266: `filename*` wins over `filename`), made safe to store. */
export function filenameFrom(disposition: string): string | null {
  const star = /(?:^|;)\s*filename\*\s*=\s*([\w!#$%&+^`{}~-]*)'[^']*'([^;\s]+)/i.exec(disposition);
  if (star) {
    try {
      const name = sanitize(decodeURIComponent(star[2]!));
      if (name) return name;
    } catch {
      // malformed percent-encoding: fall back to the plain parameter
    }
  }
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(disposition);
  const token = quoted ? null : /(?:^|;)\s*filename\s*=\s*([^;\s]+)/i.exec(disposition);
  const raw = quoted ? quoted[1]!.replace(/\\(.)/g, '$1') : token?.[1];
  return (raw && sanitize(fromLatin1(raw))) || null;
}

// Senders usually put UTF-8 bytes in the plain parameter; undici gave them to us one latin1 char per byte.
const utf8 = new TextDecoder('utf-8', { fatal: true });
function fromLatin1(value: string): string {
  try {
    return utf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

/** No directories, no control characters, at most 255 characters; empty when nothing usable is left. */
function sanitize(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\x00-\x1f\x7f]/g, '').trim();
  return clean === '.' || clean === '..' ? '' : clean.slice(0, 255);
}
