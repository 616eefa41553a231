// Every answer a test app gives is checked against the OpenAPI document that same app generates: the operation
// (method + route), the status (exact, then its range, then `default`), the required headers, the media type, and
// for JSON the body itself (Ajv, JSON Schema 2020-12); and every header of the API's own vocabulary the answer
// carries (API_HEADERS, issue 38 item 6) must be declared on it. Whatever the document does not declare is a
// violation, and createTestApp's close() fails the test file with the list. So a shape the document misses cannot
// pass a test.
//
// The body checked is the one the handler gave, before Fastify's serializer: the serializer silently drops what the
// response schema does not declare and coerces what it declares otherwise (null into "", a string into a number),
// so checking only its output would let exactly those regressions through.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// CommonJS; its default export arrives wrapped under ESM (as in src/app.ts).
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule.default }).default;

type Json = Record<string, unknown>;
type Validate = ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };

/**
 * The headers a caller reads (ids, limits, replays, files, cookies, redirects): an answer that carries one must
 * declare it. Security and transport headers (CSP, Cache-Control, Content-Length …) are not a caller's contract.
 */
const API_HEADERS = /^(x-request-id|x-run-id|retry-after|ratelimit-(limit|remaining|reset)|idempotent-replayed|content-disposition|set-cookie|location)$/;

export class OpenApiChecker {
  readonly violations: string[] = [];
  private doc: Json | null = null;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, Validate>();
  /** What each handler handed to the serializer, as JSON would carry it. */
  private readonly handed = new WeakMap<FastifyReply, unknown>();

  constructor(violations?: string[]) {
    if (violations) this.violations = violations;
    addFormats(this.ajv as never);
    this.ajv.addFormat('binary', true);
  }

  /** Installs the check on `app` (before its routes exist: buildApp's `instrument`). */
  install(app: FastifyInstance): void {
    app.addHook('preSerialization', (_req, reply, payload, done) => {
      this.handed.set(reply, JSON.parse(JSON.stringify(payload) ?? 'null'));
      done(null, payload);
    });
    app.addHook('onSend', (req, reply, payload, done) => {
      try {
        const problem = this.check(app, req, reply, payload);
        if (problem) this.violations.push(`${req.method} ${req.routeOptions.url} → ${reply.statusCode}: ${problem}`);
      } catch (err) {
        this.violations.push(`${req.method} ${req.routeOptions.url} → ${reply.statusCode}: the check failed: ${String(err)}`);
      }
      done(null, payload);
    });
  }

  private check(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, payload: unknown): string | null {
    const url = req.routeOptions.url;
    // No route (the 404 handler) or a route the document leaves out on purpose (/openapi.json, /docs).
    if (url === undefined || req.routeOptions.schema?.hide) return null;
    this.doc ??= app.swagger() as unknown as Json;
    const path = url.replace(/:(\w+)/g, '{$1}').replace('*', '{path}');
    const item = (this.doc.paths as Record<string, Json | undefined>)[path];
    const method = req.method.toLowerCase();
    // Fastify answers HEAD for every GET route itself; the GET operation describes it (without a body).
    const op = (item?.[method] ?? (method === 'head' ? item?.get : undefined)) as Json | undefined;
    if (!op) return `no operation ${method.toUpperCase()} ${path} in the document`;
    const responses = op.responses as Record<string, Json>;
    const status = String(reply.statusCode);
    const keys = [status, `${status[0]}XX`, 'default'].filter((k) => responses[k]);
    if (keys.length === 0) return `status ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`;
    const problems = keys.map((k) => this.accepts(`${method} ${path} ${k}`, responses[k]!, reply, payload, method === 'head'));
    return problems.includes(null) ? null : problems[0]!;
  }

  /** Null when `response` describes this answer, else why not. */
  private accepts(key: string, response: Json, reply: FastifyReply, payload: unknown, headersOnly: boolean): string | null {
    const headers = (response.headers ?? {}) as Record<string, Json>;
    for (const [name, header] of Object.entries(headers)) {
      if (this.resolve(header).required === true && reply.getHeader(name) === undefined) return `required header ${name} is missing`;
    }
    // The webhook routes and the zone proxy pass on an agent's or a zone app's own answer: its headers are theirs.
    if (!/^(post|put|patch) \/api\/agents\/\{agentId\}\/runs\/webhook|^\w+ \/zones\//.test(key)) {
      const undeclared = Object.keys(reply.getHeaders()).filter((name) => API_HEADERS.test(name) && !(name in headers));
      if (undeclared.length > 0) return `header ${undeclared.join(', ')} sent but not declared`;
    }
    if (headersOnly) return null; // HEAD: Node sends no body, whatever the handler gave
    const content = response.content as Record<string, { schema?: Json }> | undefined;
    if (!content) return isEmpty(payload) ? null : 'a body where the document declares none';
    if (isStream(payload)) return null; // streamed: its bytes cannot be read here without taking them from the client
    const media = String(reply.getHeader('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const declared = content[media] ?? content[`${media.split('/')[0]}/*`] ?? content['*/*'];
    if (!declared) return `content type "${media}" is not declared (declared: ${Object.keys(content).join(', ')})`;
    if (!/^application\/([\w.+-]+\+)?json$/.test(media) || !declared.schema) return null;
    const text = Buffer.isBuffer(payload) ? payload.toString('utf8') : String(payload ?? '');
    let body: unknown;
    try {
      body = this.handed.has(reply) ? this.handed.get(reply) : JSON.parse(text);
    } catch {
      return `the body is not JSON: ${text.slice(0, 120)}`;
    }
    const validate = this.validator(`${key} ${media}`, declared.schema);
    if (validate(body)) return null;
    const why = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
    return `the body does not match the document (${why}): ${JSON.stringify(body).slice(0, 300)}`;
  }

  private validator(key: string, schema: Json): Validate {
    let validate = this.validators.get(key);
    if (!validate) {
      // The document's references point at #/components/…: compile the schema with the components beside it.
      validate = this.ajv.compile({ ...schema, components: this.doc!.components }) as Validate;
      this.validators.set(key, validate);
    }
    return validate;
  }

  private resolve(header: Json): Json {
    const ref = header.$ref;
    if (typeof ref !== 'string') return header;
    const name = ref.split('/').pop()!;
    return ((this.doc!.components as Json).headers as Record<string, Json>)[name]!;
  }
}

function isEmpty(payload: unknown): boolean {
  return payload === undefined || payload === null || payload === '' || (Buffer.isBuffer(payload) && payload.length === 0);
}

function isStream(payload: unknown): boolean {
  return typeof (payload as { pipe?: unknown } | null)?.pipe === 'function';
}
