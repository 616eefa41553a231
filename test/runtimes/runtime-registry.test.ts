import { describe, expect, it } from 'vitest';
import { createRuntimeRegistry } from '../../src/runtimes/runtime-registry.ts';
import { N8nAdapter } from '../../src/runtimes/n8n-adapter.ts';
import { TriggerDevAdapter } from '../../src/runtimes/trigger-dev-adapter.ts';
import { wirePayload, type RuntimeAdapter, type RuntimeKind } from '../../src/runtimes/runtime-adapter.ts';

describe('runtime registry', () => {
  it('serves n8n for workflow runtimes and Trigger.dev for task runtimes', async () => {
    const registry = createRuntimeRegistry({ http: { timeouts: { connectMs: 100 } } });
    expect(registry.get('workflow')).toBeInstanceOf(N8nAdapter);
    expect(registry.get('task')).toBeInstanceOf(TriggerDevAdapter);
    expect(registry.get('workflow').kind).toBe('workflow');
    expect(registry.get('task').kind).toBe('task');
    expect(() => registry.get('other' as RuntimeKind)).toThrow(/no runtime adapter/);
    await registry.close();
  });

  it('lets tests swap in their own adapter', async () => {
    const stub = { kind: 'task' } as RuntimeAdapter;
    const registry = createRuntimeRegistry({ adapters: { task: stub } });
    expect(registry.get('task')).toBe(stub);
    expect(registry.get('workflow')).toBeInstanceOf(N8nAdapter);
    await registry.close();
  });
});

describe('wirePayload', () => {
  it('keeps the spec 2.3 fields and nothing else', () => {
    const p = { runId: 1, input: { a: 1 }, credentialsToken: 't', agentApiKey: 'ars_agent_x' };
    expect(wirePayload(p)).toEqual({ runId: 1, input: { a: 1 }, credentialsToken: 't' });
    expect(wirePayload({ runId: 2, input: undefined })).toEqual({ runId: 2, input: {} });
  });

  it('keeps our compatible additions: deploymentId, serviceUrl, callbackUrl (issue 13 item 3)', () => {
    const urls = { serviceUrl: 'https://ars.example', callbackUrl: 'https://ars.example/api/runs/3/callback' };
    expect(wirePayload({ runId: 3, deploymentId: 'd', input: {}, ...urls })).toEqual({ runId: 3, deploymentId: 'd', input: {}, ...urls });
  });
});

describe('registry shutdown', () => {
  it('cuts held calls that outlive the grace period', async () => {
    const { N8nFake, n8nAnswers } = await import('../fakes/n8n-fake.ts');
    const fake = await new N8nFake().start();
    fake.registerWorkflow('forever', n8nAnswers.never());
    const registry = createRuntimeRegistry();
    const runtime = { id: 1, kind: 'workflow' as const, baseUrl: fake.url, apiKey: null };
    const invoked = await registry.get('workflow').invoke({ runtime, target: 'forever', payload: { runId: 1, input: {} } });
    if (!invoked.ok) throw new Error('invoke failed');
    const t0 = Date.now();
    await registry.close(200);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect((await invoked.value.answer!).status).toBe('failed');
    await fake.stop();
  });
});
