// The one place that knows which adapter serves which runtime kind (decisions.md "Runtimes"): a third kind is a
// new adapter plus one line in FACTORIES (and its name in RuntimeKind).
import type { RuntimeAdapter, RuntimeKind } from './runtime-adapter.ts';
import { RuntimeHttp, type RuntimeHttpOptions } from './http.ts';
import { N8nAdapter } from './n8n-adapter.ts';
import { TriggerDevAdapter } from './trigger-dev-adapter.ts';
import { createOutboundClient, type OutboundClient } from '../lib/safe-http.ts';

export interface RuntimeRegistry {
  /** The adapter for a runtime row's `kind`. Throws only for a kind no adapter serves (a programming error). */
  get(kind: RuntimeKind): RuntimeAdapter;
  /** Closes the shared outbound pool: in-flight calls get `graceMs` (default 5 s), then are cut. */
  close(graceMs?: number): Promise<void>;
}

export interface RuntimeRegistryOptions {
  /** Timeouts and size limits for every adapter's outbound calls (tests shorten them), and the metrics they feed. */
  http?: RuntimeHttpOptions;
  /**
   * The SSRF-guarded client for URLs a runtime hands back (Trigger.dev's presigned outputs): the context passes its
   * own (ctx.outbound, with ARS_OUTBOUND_ALLOW_HOSTS), and closes it. Without one the registry makes one with an
   * empty allow-list, and closes it itself.
   */
  outbound?: OutboundClient;
  /** Replace an adapter, e.g. with an in-memory fake in route tests. */
  adapters?: Partial<Record<RuntimeKind, RuntimeAdapter>>;
}

const FACTORIES: Record<RuntimeKind, (http: RuntimeHttp, outbound: OutboundClient) => RuntimeAdapter> = {
  workflow: (http) => new N8nAdapter({ http }),
  task: (http, outbound) => new TriggerDevAdapter({ http, outbound }),
};

export function createRuntimeRegistry(opts: RuntimeRegistryOptions = {}): RuntimeRegistry {
  // One pool for all adapters: keep-alive sockets are per origin anyway, and shutdown closes one thing.
  const http = new RuntimeHttp(opts.http);
  const outbound = opts.outbound ?? createOutboundClient({ allowHosts: [] });
  const adapters = new Map<RuntimeKind, RuntimeAdapter>();
  for (const kind of Object.keys(FACTORIES) as RuntimeKind[]) {
    adapters.set(kind, opts.adapters?.[kind] ?? FACTORIES[kind](http, outbound));
  }
  return {
    get(kind) {
      const adapter = adapters.get(kind);
      if (!adapter) throw new Error(`no runtime adapter for kind "${String(kind)}"`);
      return adapter;
    },
    async close(graceMs) {
      await http.close(graceMs);
      if (!opts.outbound) await outbound.close();
    },
  };
}
