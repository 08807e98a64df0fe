import { formatTraceparent, newSpanId } from './context.js';

/** OTLP span kinds used here (opentelemetry.proto.trace.v1.Span.SpanKind). */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const;
/** OTLP status codes (opentelemetry.proto.trace.v1.Status.StatusCode). */
export const StatusCode = { unset: 0, ok: 1, error: 2 } as const;

export type AttributeValue = string | number | boolean;

/** A finished span, as the exporter encodes it. Times are epoch milliseconds (fractional). */
export interface FinishedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: ReadonlyArray<readonly [string, AttributeValue]>;
  readonly status: number;
  readonly statusMessage?: string;
}

/** Where finished spans go (the batching exporter). Must never throw or block. */
export type SpanSink = (span: FinishedSpan) => void;

/** The most characters of one attribute value: names come from registrations and servers. */
export const ATTRIBUTE_MAX = 256;

// performance.now() is monotonic; its origin turns it into wall-clock time at sub-ms precision.
const origin = performance.timeOrigin;
export const nowMs = (): number => origin + performance.now();

/** One span being recorded. Ending it twice records it once. */
export class Span {
  readonly spanId = newSpanId();
  private readonly startMs = nowMs();
  private readonly attributes: [string, AttributeValue][] = [];
  private status: number = StatusCode.unset;
  private statusMessage: string | undefined;
  private ended = false;

  constructor(
    private readonly sink: SpanSink,
    readonly traceId: string,
    private readonly name: string,
    private readonly kind: number,
    private readonly parentSpanId: string | undefined,
  ) {}

  set(key: string, value: AttributeValue): this {
    this.attributes.push([key, typeof value === 'string' ? value.slice(0, ATTRIBUTE_MAX) : value]);
    return this;
  }

  /** The gateway's own words (never a server's or the arguments'): a fixed reason for the error. */
  fail(message: string): this {
    this.status = StatusCode.error;
    this.statusMessage = message.slice(0, ATTRIBUTE_MAX);
    return this;
  }

  /** The W3C traceparent that makes this span the parent of what the receiver does. */
  traceparent(): string {
    return formatTraceparent(this.traceId, this.spanId);
  }

  child(name: string, kind: number = SpanKind.internal): Span {
    return new Span(this.sink, this.traceId, name, kind, this.spanId);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sink({
      traceId: this.traceId,
      spanId: this.spanId,
      ...(this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      name: this.name,
      kind: this.kind,
      startMs: this.startMs,
      endMs: nowMs(),
      attributes: this.attributes,
      status: this.status,
      ...(this.statusMessage !== undefined ? { statusMessage: this.statusMessage } : {}),
    });
  }
}
