/**
 * The standard OpenTelemetry variables, read once at start. Traces are on only when they say so:
 * an OTLP endpoint is named (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT),
 * or OTEL_TRACES_EXPORTER asks for otlp; OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none
 * turn them off. Anything set but not understood is said once, and traces stay off rather than
 * sending somewhere the operator did not mean.
 */
import type { BatchSettings, ExportTarget } from './exporter.js';
import type { AttributeValue } from './span.js';

export type Sampler = 'parentbased_always_on' | 'parentbased_always_off' | 'always_on';

export interface TraceConfig {
  readonly target: ExportTarget;
  readonly batch: BatchSettings;
  readonly resource: ReadonlyArray<readonly [string, AttributeValue]>;
  readonly sampler: Sampler;
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_ENDPOINT = 'http://localhost:4318/';

/** The settings, or undefined (off); `say` gets one line per setting that could not be used. */
export function traceConfig(env: Env, say: (line: string) => void): TraceConfig | undefined {
  const v = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  if (v('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporters = v('OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((e) => e.trim().toLowerCase());
  if (exporters?.includes('none')) return undefined;
  if (exporters && !exporters.includes('otlp')) {
    say(
      `ringfence: traces: OTEL_TRACES_EXPORTER=${exporters.join(',')} is not supported (only otlp); traces are off.`,
    );
    return undefined;
  }
  const tracesEndpoint = v('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = v('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!tracesEndpoint && !endpoint && !exporters) return undefined;

  const protocol =
    v('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? v('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol !== 'http/protobuf') {
    say(
      `ringfence: traces: OTLP protocol ${protocol} is not supported (only http/protobuf, the collector's port 4318); traces are off. Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point the endpoint at the collector's OTLP/HTTP receiver.`,
    );
    return undefined;
  }
  // A signal-specific endpoint is used as it is; the general one gets the signal's path (OTLP spec).
  const raw = tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/*$/, '')}/v1/traces`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    say(`ringfence: traces: the OTLP endpoint is not a URL; traces are off. Set it to http(s)://HOST:PORT.`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    say(
      `ringfence: traces: the OTLP endpoint must be http:// or https:// (got ${url.protocol}); traces are off.`,
    );
    return undefined;
  }
  const headers = {
    ...pairs(v('OTEL_EXPORTER_OTLP_HEADERS'), 'OTEL_EXPORTER_OTLP_HEADERS', say, true),
    ...pairs(v('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', say, true),
  };
  const resource: [string, AttributeValue][] = Object.entries(
    pairs(v('OTEL_RESOURCE_ATTRIBUTES'), 'OTEL_RESOURCE_ATTRIBUTES', say, false),
  ).filter(([key]) => key !== 'service.name');
  const service =
    v('OTEL_SERVICE_NAME') ??
    pairs(v('OTEL_RESOURCE_ATTRIBUTES'), '', () => {}, false)['service.name'] ??
    'ringfence';
  resource.unshift(['service.name', service]);

  const millis = (name: string, fallback: number, min = 0) => {
    const text = v(name);
    if (text === undefined) return fallback;
    const n = Number(text);
    if (Number.isInteger(n) && n >= min) return n;
    say(`ringfence: traces: ${name}=${text} is not a whole number of at least ${min}; using ${fallback}.`);
    return fallback;
  };
  const timeoutMs = millis(
    'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
    millis('OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1),
    1,
  );
  const maxQueue = millis('OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1);
  const batch: BatchSettings = {
    delayMs: millis('OTEL_BSP_SCHEDULE_DELAY', 5000),
    maxQueue,
    maxBatch: Math.min(millis('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1), maxQueue),
    timeoutMs,
  };
  const samplerName = (v('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (samplerName === 'always_off') return undefined;
  const sampler: Sampler =
    samplerName === 'always_on' || samplerName === 'parentbased_always_off'
      ? samplerName
      : 'parentbased_always_on';
  if (sampler !== samplerName)
    say(
      `ringfence: traces: OTEL_TRACES_SAMPLER=${samplerName} is not supported (always_on, always_off, parentbased_always_on, parentbased_always_off); using parentbased_always_on.`,
    );
  return { target: { url, headers }, batch, resource, sampler };
}

/**
 * `key=value,key=value` (W3C baggage form, values percent-encoded), as OTEL_EXPORTER_OTLP_HEADERS
 * and OTEL_RESOURCE_ATTRIBUTES write them. A malformed item is skipped and named, never its value
 * (a header may be a collector's key).
 */
function pairs(
  text: string | undefined,
  variable: string,
  say: (line: string) => void,
  header: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const item of text.split(',')) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    const key = (at > 0 ? item.slice(0, at) : '').trim();
    let value: string | undefined;
    try {
      value = at > 0 ? decodeURIComponent(item.slice(at + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    const keyOk = header ? /^[!#$%&'*+\-.^_`|~0-9a-z]+$/i.test(key) : key !== '';
    const valueOk = value !== undefined && (!header || /^[\t\x20-\x7e]*$/.test(value));
    if (!keyOk || !valueOk) {
      if (variable) say(`ringfence: traces: an item of ${variable} is not KEY=VALUE and was skipped.`);
      continue;
    }
    out[header ? key.toLowerCase() : key] = value as string;
  }
  return out;
}
