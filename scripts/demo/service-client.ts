// The demo talks to the service the way its users do: over HTTP, with a bearer credential. A status other than
// the expected one stops the demo with the service's own answer, so a broken seed never looks like a good one.

export class ServiceClient {
  constructor(readonly baseUrl: string) {}

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the service's JSON, read field by field
  async json<T = any>(method: string, path: string, opts: { token: string; body?: unknown; expect?: number }): Promise<T> {
    const res = await this.send(method, path, opts);
    return (await res.json()) as T;
  }

  /** The raw answer (a streamed file); still checked against `expect`. */
  async send(method: string, path: string, opts: { token: string; body?: unknown; expect?: number }): Promise<Response> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${opts.token}`, ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const expected = opts.expect ?? (method === 'POST' ? 201 : 200);
    if (res.status !== expected) throw new Error(`${method} ${path} answered ${res.status} (expected ${expected}): ${await res.text()}`);
    return res;
  }

  /** Whether a page answers 200 without credentials (what the banner offers to open). */
  async answers(path: string): Promise<boolean> {
    const res = await fetch(`${this.baseUrl}${path}`).catch(() => null);
    await res?.body?.cancel();
    return res?.status === 200;
  }
}
