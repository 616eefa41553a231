import { describe, expect, it } from 'vitest';
import { DEFAULT_WAIT_MS, isValidTimeoutMs, WAIT_CEILING_MS, waitWindowMs, webhookWaitWindowMs } from '../../src/sync/wait-window.ts';
import { downloadHeaders, filenameFrom, outputsHeader } from '../../src/sync/download-headers.ts';

describe('spec 8.3 wait window', () => {
  it('spec 8.3: min(timeoutMs ?? 60000, running timeout, 5 min)', () => {
    expect(DEFAULT_WAIT_MS).toBe(60_000);
    expect(WAIT_CEILING_MS).toBe(300_000);
    expect(waitWindowMs({ runningTimeoutMs: 7_200_000 })).toBe(60_000);
    expect(waitWindowMs({ timeoutMs: 1_000, runningTimeoutMs: 7_200_000 })).toBe(1_000);
    expect(waitWindowMs({ timeoutMs: 10 ** 12, runningTimeoutMs: 7_200_000 })).toBe(300_000);
    expect(waitWindowMs({ timeoutMs: 200_000, runningTimeoutMs: 90_000 })).toBe(90_000);
    expect(waitWindowMs({ runningTimeoutMs: 30_000 })).toBe(30_000);
  });

  it('spec 8.3: webhook-and-wait has no timeoutMs: min(running timeout, 5 min)', () => {
    expect(webhookWaitWindowMs(7_200_000)).toBe(300_000);
    expect(webhookWaitWindowMs(120_000)).toBe(120_000);
  });

  it('spec 4.2: timeoutMs must be a positive integer', () => {
    for (const ok of [1, 60_000, 10 ** 9]) expect(isValidTimeoutMs(ok)).toBe(true);
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, '100', null, undefined]) expect(isValidTimeoutMs(bad)).toBe(false);
  });
});

describe('spec 4.3 download headers', () => {
  it('spec 4.3: a missing Content-Disposition is derived from the run id and MIME type; the file is never sniffed', () => {
    const h = downloadHeaders(42, { 'content-type': 'application/pdf' });
    expect(h.headers).toMatchObject({
      'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="run-42.pdf"', 'x-run-id': '42',
      'cache-control': 'no-store', 'x-content-type-options': 'nosniff',
    });
    expect(h.headers['content-length']).toBeUndefined();
    expect(downloadHeaders(7, {}).headers['content-disposition']).toBe('attachment; filename="run-7.bin"');
    expect(downloadHeaders(7, {}).mimeType).toBe('application/octet-stream');
    expect(downloadHeaders(7, { 'content-type': 'Text/CSV; charset=utf-8' }).filename).toBe('run-7.csv');
  });

  it('spec 4.3: Content-Length passes through only when it is a plain number', () => {
    expect(downloadHeaders(1, { 'content-length': '123' }).headers['content-length']).toBe('123');
    expect(downloadHeaders(1, { 'content-length': '12, 12' }).headers['content-length']).toBeUndefined();
  });

  it('spec 2.2: the stored file name is safe: no directories, no control characters, UTF-8 decoded', () => {
    expect(filenameFrom('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(filenameFrom('attachment; filename=plain.txt')).toBe('plain.txt');
    expect(filenameFrom("attachment; filename*=UTF-8''%E2%82%AC%20rates.csv")).toBe('€ rates.csv');
    expect(filenameFrom('attachment; filename="a\\"b.txt"')).toBe('a"b.txt');
    expect(filenameFrom(`attachment; filename="${Buffer.from('résumé.pdf', 'utf8').toString('latin1')}"`)).toBe('résumé.pdf');
    expect(filenameFrom('attachment; filename=".."')).toBeNull();
    expect(filenameFrom('inline')).toBeNull();
  });

  it('spec 4.3: X-Outputs is a non-negative integer or dropped', () => {
    expect(outputsHeader('5')).toBe(5);
    expect(outputsHeader('0')).toBe(0);
    for (const bad of [undefined, '', '-1', '1.5', 'abc', '1e3', '9'.repeat(20)]) expect(outputsHeader(bad)).toBeNull();
  });
});
