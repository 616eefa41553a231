// runtimes.md: runtime base URLs may carry a path prefix (n8n is often served under /n8n/); ids from runtimes and
// callers are path segments that must never climb out of the intended path.
import { describe, expect, it } from 'vitest';
import { joinUrl } from '../../src/runtimes/http.ts';

describe('joinUrl', () => {
  it('keeps the base path prefix, with or without a trailing slash, and drops its query and fragment', () => {
    expect(joinUrl('https://host.example/n8n/', 'webhook', 'abc')?.href).toBe('https://host.example/n8n/webhook/abc');
    expect(joinUrl('https://host.example/n8n', 'webhook', 'abc')?.href).toBe('https://host.example/n8n/webhook/abc');
    expect(joinUrl('http://127.0.0.1:5678', 'api', 'v1')?.href).toBe('http://127.0.0.1:5678/api/v1');
    expect(joinUrl('https://host.example/x/?a=1#f', 'y')?.href).toBe('https://host.example/x/y');
  });

  it('percent-encodes each segment so an id cannot leave its place in the path', () => {
    expect(joinUrl('https://h.example/base', 'runs', '../../admin')?.href).toBe('https://h.example/base/runs/..%2F..%2Fadmin');
    expect(joinUrl('https://h.example', 'runs', 'a b?c#d')?.href).toBe('https://h.example/runs/a%20b%3Fc%23d');
  });

  it('issue 12: refuses an empty, "." or ".." segment (GET /api/v3/runs/.. would be GET /api/v3/); encodes \\, %, / inside one', () => {
    for (const id of ['.', '..', '']) expect(joinUrl('https://h.example/base', 'api', 'v3', 'runs', id), JSON.stringify(id)).toBeNull();
    expect(joinUrl('https://h.example', 'runs', 'a\\b')?.pathname).toBe('/runs/a%5Cb');
    expect(joinUrl('https://h.example', 'runs', 'a/b')?.pathname).toBe('/runs/a%2Fb');
    expect(joinUrl('https://h.example', 'runs', '%2e%2e')?.pathname).toBe('/runs/%252e%252e');
    expect(joinUrl('https://h.example', 'runs', '...')?.pathname).toBe('/runs/...');
    expect(joinUrl('https://h.example', 'runs', '..\\..')?.pathname).toBe('/runs/..%5C..');
  });

  it('is null for a base that is not an http(s) URL, every time it is asked', () => {
    for (let i = 0; i < 2; i++) {
      expect(joinUrl('ftp://h.example', 'x')).toBeNull();
      expect(joinUrl('not a url', 'x')).toBeNull();
    }
  });
});
