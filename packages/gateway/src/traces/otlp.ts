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

/**
 * One growing buffer the whole request is written into. A nested message reserves one byte for its
 * length and writes in place; its length is patched in at the end, the bytes moved only when the
 * length needs more than one byte (a message of 128 bytes or more: spans, not attributes).
 */
class Writer {
  private buf = Buffer.allocUnsafe(16 * 1024);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  private varint(value: number): void {
    // Non-negative integers up to 2^53: enough for lengths, enums, counts and audit seqs.
    this.ensure(8);
    let n = value;
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
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

  /** A varint field written even when 0 (a oneof member must be present to be the one set). */
  uintAlways(field: number, value: number): this {
    this.tag(field, VARINT);
    this.varint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.uintAlways(field, value ? 1 : 0);
  }

  string(field: number, value: string): this {
    if (value === '') return this;
    const length = Buffer.byteLength(value, 'utf8');
    this.tag(field, LENGTH);
    this.varint(length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
    return this;
  }

  /** A string field written even when empty (an AnyValue's string_value). */
  stringAlways(field: number, value: string): this {
    if (value !== '') return this.string(field, value);
    this.tag(field, LENGTH);
    this.varint(0);
    return this;
  }

  hex(field: number, value: string): this {
    const length = value.length / 2;
    this.tag(field, LENGTH);
    this.varint(length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, 'hex');
    return this;
  }

  fixed64(field: number, value: bigint): this {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.pos = this.buf.writeBigUInt64LE(value, this.pos);
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(value, this.pos);
    return this;
  }

  /** Opens a nested message; `end` with what this returns closes it. */
  begin(field: number): number {
    this.tag(field, LENGTH);
    this.ensure(1);
    return this.pos++;
  }

  end(at: number): this {
    const length = this.pos - at - 1;
    if (length < 0x80) {
      this.buf[at] = length;
      return this;
    }
    let size = 1;
    for (let n = length; n >= 0x80; n = Math.floor(n / 0x80)) size++;
    this.ensure(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    const end = this.pos;
    this.pos = at;
    this.varint(length);
    this.pos = end;
    return this;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
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
function anyValue(w: Writer, value: AttributeValue): void {
  if (typeof value === 'string') w.stringAlways(1, value);
  else if (typeof value === 'boolean') w.bool(2, value);
  else if (Number.isSafeInteger(value) && value >= 0) w.uintAlways(3, value);
  else w.double(4, value);
}

// KeyValue: key = 1, value = 2.
function keyValue(w: Writer, field: number, key: string, value: AttributeValue): void {
  const kv = w.begin(field);
  w.string(1, key);
  const v = w.begin(2);
  anyValue(w, value);
  w.end(v).end(kv);
}

function span(w: Writer, s: FinishedSpan): void {
  // Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start 7, end 8, attributes 9,
  // status 15. Status: message 2, code 3.
  const at = w.begin(2);
  w.hex(1, s.traceId).hex(2, s.spanId);
  if (s.parentSpanId) w.hex(4, s.parentSpanId);
  w.string(5, s.name).uint(6, s.kind).fixed64(7, unixNanos(s.startMs)).fixed64(8, unixNanos(s.endMs));
  for (const [key, value] of s.attributes) keyValue(w, 9, key, value);
  if (s.status !== 0 || s.statusMessage) {
    const status = w.begin(15);
    if (s.statusMessage) w.string(2, s.statusMessage);
    w.uint(3, s.status).end(status);
  }
  w.end(at);
}

export interface ExportScope {
  /** Resource attributes (service.name and those of OTEL_RESOURCE_ATTRIBUTES). */
  readonly resource: ReadonlyArray<readonly [string, AttributeValue]>;
  readonly scopeName: string;
  readonly scopeVersion: string;
}

/** One ExportTraceServiceRequest: one resource, one instrumentation scope, these spans. */
export function encodeTraceRequest(scope: ExportScope, spans: readonly FinishedSpan[]): Uint8Array {
  const w = new Writer();
  // ExportTraceServiceRequest.resource_spans 1 → ResourceSpans.resource 1, .scope_spans 2 →
  // ScopeSpans.scope 1 (InstrumentationScope name 1, version 2), .spans 2.
  const resourceSpans = w.begin(1);
  const resource = w.begin(1);
  for (const [key, value] of scope.resource) keyValue(w, 1, key, value);
  w.end(resource);
  const scopeSpans = w.begin(2);
  const instrumentation = w.begin(1);
  w.string(1, scope.scopeName).string(2, scope.scopeVersion).end(instrumentation);
  for (const s of spans) span(w, s);
  w.end(scopeSpans).end(resourceSpans);
  return w.finish();
}
