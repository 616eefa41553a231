// An OTLP/HTTP trace receiver in the test process (issue 39 item 2): accepts what the service's exporter POSTs to
// /v1/traces (protobuf, as the standard's default protocol) and decodes the spans. The decoder reads only the fields
// the tests look at, straight from the protobuf wire format (opentelemetry-proto's trace.proto field numbers), so
// no generated code is needed.
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  service: string;
}

export interface OtlpReceiver {
  /** The OTEL_EXPORTER_OTLP_ENDPOINT to give the service (the exporter adds /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Resolves with the spans once `found` holds for them (polls every 100 ms); rejects after `timeoutMs`. */
  waitFor(found: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      spans.push(...decodeExportRequest(body));
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    async waitFor(found, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!found(spans)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get the expected spans within ${timeoutMs} ms; it has: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return spans;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Field = { no: number; wire: number; varint: bigint; bytes: Buffer };

function* fields(buf: Buffer): Generator<Field> {
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { no, wire, varint: varint(), bytes: Buffer.alloc(0) };
    else if (wire === 1) {
      yield { no, wire, varint: 0n, bytes: buf.subarray(i, i + 8) };
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      yield { no, wire, varint: 0n, bytes: buf.subarray(i, i + len) };
      i += len;
    } else if (wire === 5) {
      yield { no, wire, varint: 0n, bytes: buf.subarray(i, i + 4) };
      i += 4;
    } else throw new Error(`protobuf wire type ${wire} not expected in an OTLP trace export`);
  }
}

function decodeExportRequest(buf: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of fields(buf)) {
    if (resourceSpans.no !== 1) continue;
    let service = '';
    const scopeSpans: Buffer[] = [];
    for (const f of fields(resourceSpans.bytes)) {
      if (f.no === 1) service = String(attributesOf(f.bytes, 1)['service.name'] ?? '');
      if (f.no === 2) scopeSpans.push(f.bytes);
    }
    for (const scope of scopeSpans) {
      for (const f of fields(scope)) if (f.no === 2) out.push(decodeSpan(f.bytes, service));
    }
  }
  return out;
}

function decodeSpan(buf: Buffer, service: string): ReceivedSpan {
  const span: ReceivedSpan = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, attributes: {}, links: [], statusCode: 0, service };
  for (const f of fields(buf)) {
    if (f.no === 1) span.traceId = f.bytes.toString('hex');
    else if (f.no === 2) span.spanId = f.bytes.toString('hex');
    else if (f.no === 4) span.parentSpanId = f.bytes.toString('hex');
    else if (f.no === 5) span.name = f.bytes.toString('utf8');
    else if (f.no === 6) span.kind = Number(f.varint);
    else if (f.no === 9) Object.assign(span.attributes, keyValue(f.bytes));
    else if (f.no === 13) {
      const link = { traceId: '', spanId: '' };
      for (const l of fields(f.bytes)) {
        if (l.no === 1) link.traceId = l.bytes.toString('hex');
        if (l.no === 2) link.spanId = l.bytes.toString('hex');
      }
      span.links.push(link);
    } else if (f.no === 15) {
      for (const st of fields(f.bytes)) if (st.no === 3) span.statusCode = Number(st.varint);
    }
  }
  return span;
}

/** The KeyValue list in field `no` of a message (a Resource's attributes are its field 1). */
function attributesOf(buf: Buffer, no: number): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const f of fields(buf)) if (f.no === no) Object.assign(out, keyValue(f.bytes));
  return out;
}

function keyValue(buf: Buffer): Record<string, string | number | boolean> {
  let key = '';
  let value: string | number | boolean = '';
  for (const f of fields(buf)) {
    if (f.no === 1) key = f.bytes.toString('utf8');
    if (f.no === 2) {
      for (const v of fields(f.bytes)) {
        if (v.no === 1) value = v.bytes.toString('utf8');
        else if (v.no === 2) value = v.varint !== 0n;
        else if (v.no === 3) value = Number(BigInt.asIntN(64, v.varint));
        else if (v.no === 4) value = v.bytes.readDoubleLE(0);
      }
    }
  }
  return { [key]: value };
}
