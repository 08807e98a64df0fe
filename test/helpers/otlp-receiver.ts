/**
 * An OTLP/HTTP trace receiver in the test's own process, on loopback: it decodes every body with
 * OpenTelemetry's own protocol definitions (the protobufjs code generated from opentelemetry-proto
 * that @opentelemetry/otlp-transformer ships; pinned, later versions no longer ship a decoder) and
 * keeps every request, so a test can also see that none came.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const hex = (b: Uint8Array | undefined) => (b && b.length > 0 ? Buffer.from(b).toString('hex') : '');
type KeyValues = { key: string; value: Record<string, unknown> }[] | undefined;
/** The decoded message, as protobufjs's toObject gives it (only what is read here). */
interface Decoded {
  resourceSpans?: {
    resource?: { attributes?: KeyValues };
    scopeSpans?: {
      spans?: {
        traceId?: Uint8Array;
        spanId?: Uint8Array;
        parentSpanId?: Uint8Array;
        name: string;
        kind?: number;
        attributes?: KeyValues;
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}
const attributes = (list: KeyValues) =>
  Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      'intValue' in value
        ? Number(value.intValue)
        : (value.stringValue ?? value.boolValue ?? value.doubleValue),
    ]),
  );

export async function startOtlpReceiver() {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  /** Every span received so far, decoded (throws if a body is not an ExportTraceServiceRequest). */
  const spans = (): ReceivedSpan[] =>
    requests.flatMap((r) => {
      const decoded: Decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(r.body), {
        longs: String,
      });
      return (decoded.resourceSpans ?? []).flatMap((rs) =>
        (rs.scopeSpans ?? []).flatMap((ss) =>
          (ss.spans ?? []).map((s) => ({
            traceId: hex(s.traceId),
            spanId: hex(s.spanId),
            parentSpanId: hex(s.parentSpanId),
            name: s.name,
            kind: s.kind ?? 0,
            attributes: attributes(s.attributes),
            status: s.status,
            resource: attributes(rs.resource?.attributes),
          })),
        ),
      );
    });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
