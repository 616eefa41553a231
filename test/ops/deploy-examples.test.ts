// Issue 37 item 7: what cannot run here — compose.yaml (Docker Compose) and deploy/kubernetes — held against what
// is tested: the Dockerfile the image is built from (.ci/image.sh), the README's configuration table (every
// variable the service reads, test/config.test.ts) and the service's probe routes. Same variables, same port, same
// probe paths, a stop that outlasts the drain (decisions.md "Shutdown": ARS_SHUTDOWN_GRACE_MS, then at most 5 s).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');
/** After ARS_SHUTDOWN_GRACE_MS the process ends within this (src/server.ts HARD_EXIT_MARGIN_MS). */
const HARD_EXIT_MARGIN_S = 5;

/** The Dockerfile's final stage: its ENV, EXPOSE, USER, VOLUME, HEALTHCHECK and CMD. */
function dockerfile() {
  const text = read('Dockerfile').replace(/\\\n/g, ' ');
  const final = text.slice(text.lastIndexOf('\nFROM '));
  const line = (instr: string) => final.split('\n').find((l) => l.startsWith(`${instr} `))?.slice(instr.length + 1).trim() ?? '';
  const env = Object.fromEntries([...line('ENV').matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  return { env, expose: Number(line('EXPOSE')), user: line('USER'), volume: line('VOLUME'), healthcheck: line('HEALTHCHECK'), cmd: line('CMD') };
}

/** The variables of the README's configuration table. */
function readmeVariables(): Set<string> {
  const readme = read('README.md');
  const start = readme.indexOf('\n## Configuration');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return new Set(rows.flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!)));
}

const probeRoutes = read('src/routes/health.ts');
const df = dockerfile();
const variables = readmeVariables();

describe('the Dockerfile (the image CI builds and runs)', () => {
  it('serves on the port it exposes, keeps PGlite in its volume, runs as uid 1000 and probes /livez', () => {
    expect(df.expose).toBe(8080);
    expect(df.env.PORT).toBe(String(df.expose));
    expect(df.env.ARS_DATA_DIR).toBe('/data');
    expect(df.volume).toBe('/data');
    expect(df.user).toBe('1000:1000');
    expect(df.healthcheck).toContain("/livez'");
    expect(df.cmd).toBe('["node", "dist/server.js"]');
    for (const name of Object.keys(df.env).filter((n) => n !== 'PATH' && n !== 'NODE_ENV')) expect(variables, name).toContain(name);
    expect(probeRoutes).toContain("app.get('/livez'");
    expect(probeRoutes).toContain("app.get('/readyz'");
  });
});

describe('compose.yaml', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed YAML document, read field by field
  const compose = parse(read('compose.yaml')) as any;
  const ars = compose.services.ars;

  it('runs two replicas of this Dockerfile on the PostgreSQL service, with variables of the configuration table', () => {
    expect(ars.build).toBe('.');
    expect(ars.deploy.replicas).toBe(2);
    const env = ars.environment as Record<string, string>;
    for (const name of Object.keys(env)) expect(variables, name).toContain(name);
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/ars:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/ars$/);
    // Required with DATABASE_URL: never a default in the file, compose refuses to start without them.
    expect(env.ARS_MASTER_KEY).toMatch(/^\$\{ARS_MASTER_KEY:\?/);
    expect(env.ARS_ADMIN_TOKEN).toMatch(/^\$\{ARS_ADMIN_TOKEN:\?/);
    expect(ars.depends_on.postgres.condition).toBe('service_healthy');
    expect(compose.services.postgres.environment.POSTGRES_DB).toBe('ars');
    expect(compose.services.n8n.profiles).toEqual(['n8n']); // optional
  });

  it('publishes the image port, probes /livez like the image, and stops after the drain, not during it', () => {
    expect(ars.ports).toEqual([`8080-8081:${df.expose}`]);
    expect(ars.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${df.expose}/livez`);
    const grace = Number(ars.environment.ARS_SHUTDOWN_GRACE_MS) / 1000;
    expect(Number(/^(\d+)s$/.exec(ars.stop_grace_period)![1])).toBeGreaterThan(grace + HARD_EXIT_MARGIN_S);
  });
});

describe('deploy/kubernetes', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML documents, read field by field
  const docs = parseAllDocuments(read('deploy/kubernetes/agent-run-service.yaml')).map((d) => d.toJS() as any);
  const byKind = (kind: string) => docs.find((d) => d.kind === kind);
  const deployment = byKind('Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the container's env entries by name
  const env: Record<string, any> = Object.fromEntries((container.env as { name: string }[]).map((e) => [e.name, e]));

  it('has a Deployment, a Service, a Secret and a PodDisruptionBudget that select the same pods', () => {
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    expect(byKind('Service').spec.selector).toEqual(labels);
    expect(byKind('PodDisruptionBudget').spec.selector.matchLabels).toEqual(labels);
    expect(byKind('PodDisruptionBudget').spec.minAvailable).toBeLessThan(deployment.spec.replicas);
  });

  it('sets only variables of the configuration table; the master key and admin token come from the Secret', () => {
    for (const name of Object.keys(env)) expect(variables, name).toContain(name);
    const secret = byKind('Secret');
    for (const name of ['ARS_MASTER_KEY', 'ARS_ADMIN_TOKEN', 'DATABASE_URL']) {
      expect(env[name].value, name).toBeUndefined();
      expect(env[name].valueFrom.secretKeyRef.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(env[name].valueFrom.secretKeyRef.key);
    }
  });

  it('uses the image port and probe paths: liveness /livez, readiness /readyz', () => {
    expect(container.ports).toEqual([{ name: 'http', containerPort: df.expose }]);
    expect(env.PORT.value).toBe(String(df.expose));
    expect(byKind('Service').spec.ports[0].targetPort).toBe('http');
    expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/livez', port: 'http' });
  });

  it('gives the pod longer than preStop + the drain grace + the exit margin, and runs as the image user', () => {
    const preStop = Number(container.lifecycle.preStop.exec.command[1]);
    const grace = Number(env.ARS_SHUTDOWN_GRACE_MS.value) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + grace + HARD_EXIT_MARGIN_S);
    expect(`${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`).toBe(df.user);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    // The startup probe waits at least as long as a start retries its database.
    const startupS = container.startupProbe.periodSeconds * container.startupProbe.failureThreshold;
    expect(startupS).toBeGreaterThan(Number(env.ARS_DB_STARTUP_TIMEOUT_MS.value) / 1000);
  });
});
