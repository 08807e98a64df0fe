import { describe, expect, it } from 'vitest';
import { traceConfig } from './config.js';

function read(env: Record<string, string>) {
  const said: string[] = [];
  return { config: traceConfig(env, (line) => said.push(line)), said };
}

describe('the OTEL_* variables', () => {
  it('turn nothing on when none is set, or only those that name no exporter', () => {
    expect(read({}).config).toBeUndefined();
    expect(read({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' }).config).toBeUndefined();
    expect(read({}).said).toEqual([]);
  });

  it('send to ENDPOINT/v1/traces, or to the traces endpoint as it is', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).config?.target.url.href).toBe(
      'http://127.0.0.1:4318/v1/traces',
    );
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example/otlp/' }).config?.target.url.href).toBe(
      'https://c.example/otlp/v1/traces',
    );
    expect(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9999/custom',
      }).config?.target.url.href,
    ).toBe('http://127.0.0.1:9999/custom');
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' }).config?.target.url.href).toBe(
      'http://localhost:4318/v1/traces',
    );
  });

  it('are turned off by OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).config).toBeUndefined();
    expect(read({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).config).toBeUndefined();
    expect(read({ ...endpoint, OTEL_TRACES_SAMPLER: 'always_off' }).config).toBeUndefined();
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'false' }).config).toBeDefined();
  });

  it('stay off, saying why, for an exporter, protocol or endpoint ringfence cannot use', () => {
    for (const env of [
      { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'file:///tmp/spans' },
    ] as Record<string, string>[]) {
      const { config, said } = read(env);
      expect(config).toBeUndefined();
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^ringfence: traces: .*traces are off/);
    }
  });

  it('take headers (percent-decoded, traces ones over general ones) and never say a value', () => {
    const { config, said } = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS:
        'Authorization=Bearer%20s3cret-general,x-team=a, broken-s3cret-item ,bad key=v',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Bearer%20s3cret-traces,x-bad=line%0Abreak',
    });
    expect(config?.target.headers).toEqual({ authorization: 'Bearer s3cret-traces', 'x-team': 'a' });
    expect(said.length).toBe(3);
    expect(said.join('\n')).not.toMatch(/s3cret|break/);
  });

  it('name the service from OTEL_SERVICE_NAME, over OTEL_RESOURCE_ATTRIBUTES, ringfence by default', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(read(endpoint).config?.resource).toEqual([['service.name', 'ringfence']]);
    expect(
      read({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,deployment.environment=prod' })
        .config?.resource,
    ).toEqual([
      ['service.name', 'from-attrs'],
      ['deployment.environment', 'prod'],
    ]);
    expect(
      read({ ...endpoint, OTEL_SERVICE_NAME: 'gw-1', OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs' })
        .config?.resource,
    ).toEqual([['service.name', 'gw-1']]);
  });

  it('read the batch settings, falling back (and saying so) on a value that is not a whole number', () => {
    const { config, said } = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_BSP_MAX_QUEUE_SIZE: '10',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50',
      OTEL_EXPORTER_OTLP_TIMEOUT: '-1',
    });
    expect(config?.batch).toEqual({ delayMs: 100, maxQueue: 10, maxBatch: 10, timeoutMs: 10_000 });
    expect(said).toEqual([expect.stringContaining('OTEL_EXPORTER_OTLP_TIMEOUT=-1')]);
  });
});
