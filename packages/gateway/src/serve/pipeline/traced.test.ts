import { describe, expect, it } from 'vitest';
import type { AuditInput } from '../../audit/types.js';
import { fixedCredentials } from '../../credentials/registered.js';
import { SecretScanner } from '../../credentials/scan/scanner.js';
import { FakeUpstream } from '../../ports/__fixtures__/fake-upstream.js';
import { AskDeferred } from '../../ports/caller.js';
import { UpstreamError } from '../../ports/errors.js';
import { LOCAL_ONLY, type PolicyView } from '../../ports/policy.js';
import type { CallOptions } from '../../ports/upstream.js';
import { type DecodedSpan, decodeTraceRequest } from '../../traces/__fixtures__/otlp-decode.js';
import type { TraceConfig } from '../../traces/config.js';
import { createTracer } from '../../traces/tracer.js';
import type { CatalogEntry } from '../catalog.js';
import { runForward } from './index.js';
import type { ForwardedRequest, PipelineDeps } from './types.js';

const entry: CatalogEntry = {
  kind: 'tool',
  exposedName: 'art_draw',
  server: 'art',
  tool: 'draw',
  digest: `sha256:${'a'.repeat(64)}`,
  presented: {},
  inputSchema: { type: 'object' },
  outputSchema: undefined,
};

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const SECRET_ARGUMENT = 'argument-value-that-must-never-leave-1234';

const config: TraceConfig = {
  target: { url: new URL('http://127.0.0.1:1/v1/traces'), headers: {} },
  batch: { delayMs: 0, maxQueue: 100, maxBatch: 100, timeoutMs: 1000 },
  resource: [['service.name', 'ringfence']],
  sampler: 'parentbased_always_on',
};

/** One call through the pipeline, traced or not: what the upstream got, what was audited and exported. */
async function call(options: {
  traced: boolean;
  traceparent?: string;
  policy?: Partial<PolicyView>;
  caller?: ForwardedRequest['caller'];
  upstream?: (options: CallOptions) => Promise<unknown>;
}) {
  const written: AuditInput[] = [];
  const seen: CallOptions[] = [];
  const bodies: Uint8Array[] = [];
  const tracer = options.traced
    ? createTracer(
        config,
        () => {},
        '0.0.0',
        async (body) => {
          bodies.push(body);
        },
      )
    : undefined;
  const upstream = new FakeUpstream('art', {
    destination: 'remote art.example',
    callTool: async (_name, _args, callOptions = {}) => {
      seen.push(callOptions);
      return options.upstream
        ? options.upstream(callOptions)
        : { content: [{ type: 'text', text: 'drawn' }] };
    },
  });
  const deps: PipelineDeps = {
    policy: { ...LOCAL_ONLY, ...options.policy },
    guard: {
      prepare: async () => ({ ok: true }),
      checkArguments: async () => ({ ok: true }),
      checkResult: async () => ({ ok: true }),
    },
    audit: {
      append: async (input) => {
        written.push(input);
        return written.length;
      },
    },
    policyRef: {},
    maxResultBytes: 1024 * 1024,
    log: () => {},
    linkUri: (server: string, uri: string) => `ringfence:${server}/${uri}`,
    secrets: new SecretScanner(fixedCredentials([])),
    ...(tracer ? { tracer } : {}),
  };
  const request: ForwardedRequest = {
    method: 'tools/call',
    entry,
    args: { text: SECRET_ARGUMENT },
    caller: options.caller ?? {},
    upstream,
    unavailableReason: '',
    protocolVersion: undefined,
    ...(options.traceparent ? { traceparent: options.traceparent } : {}),
  };
  const reply = await runForward(deps, request).catch((error: unknown) => error);
  await tracer?.flush();
  // The deferred result entry is written on the next tick.
  await new Promise((r) => setTimeout(r, 0));
  const spans: DecodedSpan[] = bodies.flatMap((b) => decodeTraceRequest(b).flatMap((r) => r.spans));
  const byName = (name: string) => spans.find((s) => s.name === name);
  return { reply, written, seen, spans, byName, bodies };
}

const traceIds = (written: AuditInput[]) => written.map((w) => (w.refs as { trace_id?: string }).trace_id);

describe('a traced call', () => {
  it('continues the client’s trace: the call span is its child, decide/forward/result the call’s, the server the forward span’s', async () => {
    const { spans, byName, seen, written } = await call({
      traced: true,
      traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
    });
    expect(spans.map((s) => s.name).sort()).toEqual(
      ['ringfence.decide', 'ringfence.forward', 'ringfence.result', 'tools/call draw'].sort(),
    );
    const root = byName('tools/call draw')!;
    expect(root).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, kind: 2 });
    for (const name of ['ringfence.decide', 'ringfence.forward', 'ringfence.result'])
      expect(byName(name)).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: root.spanId });
    const forward = byName('ringfence.forward')!;
    expect(forward.kind).toBe(3);
    expect(seen[0]?.traceparent).toBe(`00-${CLIENT_TRACE}-${forward.spanId}-01`);
    expect(root.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'ringfence.server': 'art',
      'gen_ai.tool.name': 'draw',
      'ringfence.decision': 'allowed',
      'ringfence.rule': 'no-policy',
      'ringfence.audit.seq': 1,
    });
    expect(byName('ringfence.result')?.attributes).toEqual({ 'ringfence.result.is_error': false });
    expect(traceIds(written)).toEqual([CLIENT_TRACE, CLIENT_TRACE]);
    // The span order in time: decide ends before forward starts, forward before result.
    expect(BigInt(byName('ringfence.decide')!.endTimeUnixNano)).toBeLessThanOrEqual(
      BigInt(forward.startTimeUnixNano),
    );
  });

  it('never exports an argument value', async () => {
    const { bodies } = await call({ traced: true, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) expect(Buffer.from(body).toString('latin1')).not.toContain(SECRET_ARGUMENT);
  });

  it('starts a trace of its own without a client traceparent, and the audit entries name it', async () => {
    const { byName, seen, written } = await call({ traced: true });
    const root = byName('tools/call draw')!;
    expect(root.parentSpanId).toBe('');
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIds(written)).toEqual([root.traceId, root.traceId]);
    expect(seen[0]?.traceparent).toBe(`00-${root.traceId}-${byName('ringfence.forward')!.spanId}-01`);
  });

  it('records a refusal on the call span (refused, the rule, an error status) and forwards nothing', async () => {
    const { spans, byName, seen, written } = await call({
      traced: true,
      traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      policy: { decideCall: () => ({ action: 'deny', rule: 'no-drawing', reason: 'drawing is off' }) },
    });
    expect(seen).toHaveLength(0);
    expect(spans.map((s) => s.name).sort()).toEqual(['ringfence.decide', 'tools/call draw']);
    expect(byName('tools/call draw')).toMatchObject({
      attributes: expect.objectContaining({
        'ringfence.decision': 'refused',
        'ringfence.rule': 'no-drawing',
      }),
      status: { code: 2, message: 'refused by ringfence' },
    });
    expect(traceIds(written)).toEqual([CLIENT_TRACE]);
  });

  it('marks the forward span and the call failed when the upstream fails', async () => {
    const { byName } = await call({
      traced: true,
      upstream: async () => {
        throw new UpstreamError('UPSTREAM_LOST', 'gone');
      },
    });
    expect(byName('ringfence.forward')?.status).toEqual({ code: 2, message: 'the upstream request failed' });
    expect(byName('tools/call draw')?.status).toMatchObject({ code: 2 });
    expect(byName('ringfence.result')?.attributes).toEqual({ 'ringfence.result.is_error': true });
  });

  it('ends the call span without an error when a 2026 ask goes back to the client (the retry is its own call)', async () => {
    const { reply, spans, byName, seen, written } = await call({
      traced: true,
      policy: { decideCall: () => ({ action: 'ask', rule: 'ask-first', reason: 'a person decides' }) },
      caller: {
        ask: async (question: string) => {
          throw new AskDeferred(question);
        },
      },
    });
    expect(reply).toBeInstanceOf(AskDeferred);
    expect(seen).toHaveLength(0);
    expect(written).toHaveLength(0);
    expect(spans.map((s) => s.name).sort()).toEqual(['ringfence.decide', 'tools/call draw']);
    expect(byName('tools/call draw')?.attributes['ringfence.decision']).toBe('asked');
    expect(byName('tools/call draw')?.status).toBeUndefined();
  });

  it('is not recorded when the client did not sample it: its traceparent goes on as it came', async () => {
    const unsampled = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-00`;
    const { spans, seen, written } = await call({ traced: true, traceparent: unsampled });
    expect(spans).toEqual([]);
    expect(seen[0]?.traceparent).toBe(unsampled);
    expect(traceIds(written)).toEqual([CLIENT_TRACE, CLIENT_TRACE]);
  });
});

describe('an untraced call (traces off)', () => {
  it('passes the client’s traceparent on as it came and still names its trace in the audit entries', async () => {
    const client = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
    const { seen, written, spans } = await call({ traced: false, traceparent: client });
    expect(spans).toEqual([]);
    expect(seen[0]?.traceparent).toBe(client);
    expect(traceIds(written)).toEqual([CLIENT_TRACE, CLIENT_TRACE]);
  });

  it('writes no trace_id without one, and none for a value that is not a W3C traceparent', async () => {
    expect(traceIds((await call({ traced: false })).written)).toEqual([undefined, undefined]);
    const forged = await call({ traced: false, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01\n"x":1` });
    expect(traceIds(forged.written)).toEqual([undefined, undefined]);
  });
});
