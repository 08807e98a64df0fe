import { describe, expect, it } from 'vitest';
import { decodeTraceRequest } from './__fixtures__/otlp-decode.js';
import { encodeTraceRequest, unixNanos } from './otlp.js';
import type { FinishedSpan } from './span.js';

const scope = {
  resource: [['service.name', 'ringfence-test']] as const,
  scopeName: 'ringfence',
  scopeVersion: '9.9.9',
};

const span = (over: Partial<FinishedSpan> = {}): FinishedSpan => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  parentSpanId: '00f067aa0ba902b7',
  name: 'tools/call draw',
  kind: 2,
  startMs: 1_764_633_600_123.456,
  endMs: 1_764_633_600_125.5,
  attributes: [
    ['ringfence.server', 'art'],
    ['ringfence.audit.seq', 42],
    ['zero', 0],
    ['big', 2 ** 40 + 3],
    ['ratio', 0.25],
    ['negative', -7],
    ['is_error', false],
    ['unicode', 'é\u{1F600}'],
    ['empty', ''],
  ],
  status: 2,
  statusMessage: 'refused by ringfence',
  ...over,
});

describe('the OTLP protobuf encoder, read back with OpenTelemetry’s own definitions', () => {
  it('writes every field a span needs where opentelemetry-proto has it', () => {
    const [decoded] = decodeTraceRequest(encodeTraceRequest(scope, [span()]));
    expect(decoded?.resource).toEqual({ 'service.name': 'ringfence-test' });
    expect(decoded?.scope).toEqual({ name: 'ringfence', version: '9.9.9' });
    expect(decoded?.spans).toHaveLength(1);
    const s = decoded!.spans[0]!;
    expect(s).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      parentSpanId: '00f067aa0ba902b7',
      name: 'tools/call draw',
      kind: 2,
      startTimeUnixNano: '1764633600123456000',
      endTimeUnixNano: '1764633600125500000',
      status: { code: 2, message: 'refused by ringfence' },
    });
    expect(s.attributes).toEqual({
      'ringfence.server': 'art',
      'ringfence.audit.seq': 42,
      zero: 0,
      big: 2 ** 40 + 3,
      ratio: 0.25,
      negative: -7,
      is_error: false,
      unicode: 'é\u{1F600}',
      empty: '',
    });
  });

  it('leaves out what is unset (a root span has no parent, an unset status no Status) and keeps many spans apart', () => {
    const spans = [
      span({ parentSpanId: undefined, status: 0, statusMessage: undefined }),
      span({ spanId: '1111111111111111', name: 'ringfence.forward', kind: 3 }),
    ];
    const [decoded] = decodeTraceRequest(encodeTraceRequest(scope, spans));
    expect(decoded?.spans.map((s) => [s.spanId, s.parentSpanId, s.name, s.kind, s.status])).toEqual([
      ['b7ad6b7169203331', '', 'tools/call draw', 2, undefined],
      [
        '1111111111111111',
        '00f067aa0ba902b7',
        'ringfence.forward',
        3,
        { code: 2, message: 'refused by ringfence' },
      ],
    ]);
  });

  it('counts time in nanoseconds past 2^53 without losing the sub-millisecond part', () => {
    expect(unixNanos(1_764_633_600_000)).toBe(1_764_633_600_000_000_000n);
    expect(unixNanos(1_764_633_600_000.001)).toBe(1_764_633_600_000_001_000n);
  });

  it('writes a body of 1,000 spans that decodes whole (lengths past one varint byte)', () => {
    const many = Array.from({ length: 1000 }, (_, i) => span({ spanId: i.toString(16).padStart(16, '1') }));
    const [decoded] = decodeTraceRequest(encodeTraceRequest(scope, many));
    expect(decoded?.spans).toHaveLength(1000);
    expect(decoded?.spans[999]?.spanId).toBe((999).toString(16).padStart(16, '1'));
  });
});
