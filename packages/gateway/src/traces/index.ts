/**
 * OpenTelemetry traces of forwarded calls (docs/operations.md, "Traces"). Off unless the standard
 * OTEL_* variables turn them on; off, there is no tracer at all, and the pipeline's one check of
 * `deps.tracer` is the whole cost of a call.
 */

import { traceConfig } from './config.js';
import { shownUrl } from './exporter.js';
import { type CallTracer, createTracer } from './tracer.js';

export { checkedTraceparent, TRACEPARENT, traceIdOf } from './context.js';
export { Span, SpanKind } from './span.js';
export type { CallTracer } from './tracer.js';

/** The tracer the OTEL_* variables ask for, or undefined (traces off). */
export function tracerFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
  version = '',
): CallTracer | undefined {
  const config = traceConfig(env, log);
  if (!config) return undefined;
  log(`ringfence: traces: spans of calls go to ${shownUrl(config.target.url)} (OTLP/HTTP)`);
  return createTracer(config, log, version);
}
