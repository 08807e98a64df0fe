/**
 * OTLP/HTTP protobuf body of an `ExportTraceServiceRequest` (opentelemetry-proto,
 * collector/trace/v1), written by hand: the few messages a span needs, no protobuf runtime. The
 * e2e test decodes these bodies with OpenTelemetry's own generated definitions, so a field number
 * or wire type written wrong here fails there.
 */
import type { AttributeValue, FinishedSpan } from './span.js';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;

/** Bytes of one message, appended field by field. */
class Message {
  private readonly parts: Uint8Array[] = [];
  private scratch: number[] = [];
  length = 0;

  private flush(): void {
    if (this.scratch.length === 0) return;
    this.parts.push(Uint8Array.from(this.scratch));
    this.scratch = [];
  }

  private varint(value: number): void {
    // Non-negative integers up to 2^53: enough for lengths, enums, counts and audit seqs.
    let n = value;
    while (n >= 0x80) {
      this.scratch.push((n % 0x80) | 0x80);
      this.length++;
      n = Math.floor(n / 0x80);
    }
    this.scratch.push(n);
    this.length++;
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  uint(field: number, value: number): this {
    if (value === 0) return this;
    this.tag(field, VARINT);
    this.varint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    this.tag(field, VARINT);
    this.varint(value ? 1 : 0);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, LENGTH);
    this.varint(value.length);
    this.flush();
    this.parts.push(value);
    this.length += value.length;
    return this;
  }

  string(field: number, value: string): this {
    return value === '' ? this : this.bytes(field, Buffer.from(value, 'utf8'));
  }

  hex(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'hex'));
  }

  message(field: number, value: Message): this {
    return this.bytes(field, value.finish());
  }

  fixed64(field: number, value: bigint): this {
    this.tag(field, FIXED64);
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(value);
    this.flush();
    this.parts.push(b);
    this.length += 8;
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, FIXED64);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.flush();
    this.parts.push(b);
    this.length += 8;
    return this;
  }

  finish(): Uint8Array {
    this.flush();
    return Buffer.concat(this.parts, this.length);
  }
}

/**
 * Epoch milliseconds (fractional) as the unsigned nanoseconds OTLP counts, to the microsecond: a
 * double holding epoch milliseconds is exact to about a quarter of one, no finer.
 */
export function unixNanos(ms: number): bigint {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1000)) * 1000n;
}

// AnyValue: string_value = 1, bool_value = 2, int_value = 3, double_value = 4.
function anyValue(value: AttributeValue): Message {
  const m = new Message();
  if (typeof value === 'string') return m.bytes(1, Buffer.from(value, 'utf8'));
  if (typeof value === 'boolean') return m.bool(2, value);
  if (Number.isSafeInteger(value) && value >= 0) {
    m.uint(3, value);
    // int_value 0 must still be present to say which member of the oneof is set.
    return value === 0 ? m.bool(3, false) : m;
  }
  return m.double(4, value);
}

// KeyValue: key = 1, value = 2.
function keyValue(key: string, value: AttributeValue): Message {
  return new Message().string(1, key).message(2, anyValue(value));
}

function span(s: FinishedSpan): Message {
  // Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start 7, end 8, attributes 9,
  // status 15, flags 16 (unused). Status: message 2, code 3.
  const m = new Message().hex(1, s.traceId).hex(2, s.spanId);
  if (s.parentSpanId) m.hex(4, s.parentSpanId);
  m.string(5, s.name).uint(6, s.kind).fixed64(7, unixNanos(s.startMs)).fixed64(8, unixNanos(s.endMs));
  for (const [key, value] of s.attributes) m.message(9, keyValue(key, value));
  if (s.status !== 0 || s.statusMessage) {
    const status = new Message();
    if (s.statusMessage) status.string(2, s.statusMessage);
    status.uint(3, s.status);
    m.message(15, status);
  }
  return m;
}

export interface ExportScope {
  /** Resource attributes (service.name and those of OTEL_RESOURCE_ATTRIBUTES). */
  readonly resource: ReadonlyArray<readonly [string, AttributeValue]>;
  readonly scopeName: string;
  readonly scopeVersion: string;
}

/** One ExportTraceServiceRequest: one resource, one instrumentation scope, these spans. */
export function encodeTraceRequest(scope: ExportScope, spans: readonly FinishedSpan[]): Uint8Array {
  const resource = new Message();
  for (const [key, value] of scope.resource) resource.message(1, keyValue(key, value));
  const scopeSpans = new Message().message(
    1,
    new Message().string(1, scope.scopeName).string(2, scope.scopeVersion),
  );
  for (const s of spans) scopeSpans.message(2, span(s));
  const resourceSpans = new Message().message(1, resource).message(2, scopeSpans);
  return new Message().message(1, resourceSpans).finish();
}
