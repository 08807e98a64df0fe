/**
 * Decodes an OTLP/HTTP protobuf body with OpenTelemetry's own protocol definitions: the
 * protobufjs code generated from opentelemetry-proto that @opentelemetry/otlp-transformer ships
 * (a dev dependency, pinned: later versions no longer ship a decoder).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string } | undefined;
}

export interface DecodedRequest {
  resource: Record<string, unknown>;
  scope: { name: string; version: string };
  spans: DecodedSpan[];
}

const hex = (b: Uint8Array | undefined) => (b && b.length > 0 ? Buffer.from(b).toString('hex') : '');

function value(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  return undefined;
}

function attributes(list: { key: string; value: Record<string, unknown> }[] | undefined) {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** Every resource's spans, flattened; throws if the body is not a valid ExportTraceServiceRequest. */
export function decodeTraceRequest(body: Uint8Array): DecodedRequest[] {
  const message = Request.decode(body);
  const object = Request.toObject(message, { longs: String, oneofs: true, defaults: false });
  return (object.resourceSpans ?? []).map((rs: Record<string, any>) => ({
    resource: attributes(rs.resource?.attributes),
    scope: { name: rs.scopeSpans?.[0]?.scope?.name ?? '', version: rs.scopeSpans?.[0]?.scope?.version ?? '' },
    spans: (rs.scopeSpans ?? []).flatMap((ss: Record<string, any>) =>
      (ss.spans ?? []).map((s: Record<string, any>) => ({
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: hex(s.parentSpanId),
        name: s.name,
        kind: s.kind ?? 0,
        startTimeUnixNano: s.startTimeUnixNano,
        endTimeUnixNano: s.endTimeUnixNano,
        attributes: attributes(s.attributes),
        status: s.status,
      })),
    ),
  }));
}
