// Shared by the SDK suites: the real service on a real port (the SDK speaks HTTP through fetch), the runtime fakes
// behind it, and a fetch that counts, cuts or refuses requests the way a network or a proxy would.
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/test-app.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import type { FetchLike } from '../../packages/sdk/src/index.ts';

export interface SdkWorld {
  t: TestApp;
  base: string;
  n8n: N8nFake;
  trig: TriggerDevFake;
  stop(): Promise<void>;
}

export async function startWorld(opts: TestAppOptions = {}): Promise<SdkWorld> {
  const n8n = new N8nFake();
  const trig = new TriggerDevFake();
  await Promise.all([n8n.start(), trig.start()]);
  // The task payload's serviceUrl/callbackUrl come from ARS_PUBLIC_URL: it must be the address the tasks reach.
  const url = await unusedUrl();
  const t = await createTestApp({ ...opts, config: { ...opts.config, publicUrl: url } });
  const base = await t.app.listen({ port: Number(new URL(url).port), host: '127.0.0.1' });
  return {
    t, base, n8n, trig,
    stop: async () => {
      await t.close();
      await Promise.all([n8n.stop(), trig.stop()]);
    },
  };
}

/** What a scripted fetch does with the next request: pass it on, answer for the service, or lose the answer. */
export type Step = 'pass' | 'cut-after-delivery' | { status: number; headers?: Record<string, string>; body?: string };

/** A fetch that records every request (its headers included) and plays `steps` before passing requests through. */
export function scriptedFetch(steps: Step[] = []): FetchLike & { calls: Array<{ url: string; headers: Record<string, string> }> } {
  const calls: Array<{ url: string; headers: Record<string, string> }> = [];
  const f = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({ url, headers: { ...(init.headers as Record<string, string>) } });
    const step = steps.shift() ?? 'pass';
    if (step === 'pass') return fetch(url, init);
    if (step === 'cut-after-delivery') {
      // The service did the work; its answer is lost on the way back, as when a connection drops.
      const res = await fetch(url, init);
      await res.body?.cancel();
      throw new TypeError('fetch failed');
    }
    return new Response(step.body ?? '', { status: step.status, headers: step.headers });
  };
  return Object.assign(f, { calls });
}
