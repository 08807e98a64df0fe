import type { TraceConfig } from './config.js';
import { checkedTraceparent, newTraceId, parentIdOf, sampledIn, traceIdOf } from './context.js';
import { BatchExporter } from './exporter.js';
import { type FinishedSpan, Span, SpanKind } from './span.js';

/** What the pipeline asks of tracing: a call's span, and an end for shutdown. */
export interface CallTracer {
  /**
   * The span of one call: a child of the client's span when its traceparent is given and sampled
   * (or the sampler ignores the flag), the root of a new trace without one. Undefined when the
   * sampler leaves the call out: the client's traceparent is then passed on as it came.
   */
  startCall(name: string, traceparent: string | undefined): Span | undefined;
  /** Send the spans still queued, waiting at most `ms`. */
  flush(ms?: number): Promise<void>;
}

export function createTracer(
  config: TraceConfig,
  log: (line: string) => void,
  version: string,
  send?: (body: Uint8Array) => Promise<void>,
): CallTracer & { readonly exporter: BatchExporter } {
  const exporter = new BatchExporter(
    config.target,
    { resource: config.resource, scopeName: 'ringfence', scopeVersion: version },
    config.batch,
    log,
    send,
  );
  return {
    exporter,
    startCall(name, traceparent) {
      const parent = checkedTraceparent(traceparent);
      if (parent) {
        if (config.sampler !== 'always_on' && !sampledIn(parent)) return undefined;
        return new Span(exporter.add, traceIdOf(parent), name, SpanKind.server, parentIdOf(parent));
      }
      if (config.sampler === 'parentbased_always_off') return undefined;
      return new Span(exporter.add, newTraceId(), name, SpanKind.server, undefined);
    },
    flush: (ms) => exporter.flush(ms),
  };
}

export type { FinishedSpan };
