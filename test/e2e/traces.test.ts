import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, ringfence } from '../helpers/cli.js';
import { connectStdio, firstText, freshHome } from '../helpers/mcp.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startWithReadyLine, stopAll } from '../helpers/processes.js';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
const ARGUMENT = 'an-argument-value-that-stays-out-of-traces';

const until = async <T>(what: string, value: () => T | undefined, ms = 20_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const got = value();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/**
 * One trace across client → gateway → upstream: a real SDK client sends a traceparent in `_meta`,
 * `ringfence mcp serve` (stdio) with the standard OTEL_* variables exports its spans to a receiver
 * in this test, and a remote server on loopback records the traceparent that reached it.
 */
describe('OpenTelemetry traces of a call', () => {
  let home: string;
  let record: string;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

  beforeAll(async () => {
    home = await freshHome();
    record = join(dirname(home), 'trace-record.jsonl');
    receiver = await startOtlpReceiver();
    const { ready } = await startWithReadyLine<{ port: number }>(process.execPath, [
      `${repoRoot}test/fixtures/trace-server.mjs`,
      record,
    ]);
    const added = await ringfence(['mcp', 'add', 'traced', '--url', `http://127.0.0.1:${ready.port}/mcp`], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    await receiver?.close();
    await stopAll();
  });

  const calls = async () =>
    (await readFile(record, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { header: string | null; meta: string | null });

  it('exports the gateway’s spans as children of the client’s, and the upstream is the forward span’s child', async () => {
    const served = await connectStdio(home, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k%201',
      OTEL_SERVICE_NAME: 'ringfence-e2e',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    const result = await served.client.callTool({
      name: 'traced_echo',
      arguments: { text: ARGUMENT },
      _meta: { traceparent: CLIENT_TRACEPARENT },
    });
    expect(firstText(result)).toBe(ARGUMENT);
    const spans = await until('four spans', () => {
      const got = receiver.spans().filter((s) => s.traceId === CLIENT_TRACE);
      return got.length >= 4 ? got : undefined;
    });
    expect(served.stderr()).toContain(
      `ringfence: traces: spans of calls go to ${receiver.endpoint}/v1/traces`,
    );
    await served.close();

    const root = spans.find((s) => s.name === 'tools/call echo');
    expect(root).toMatchObject({ parentSpanId: CLIENT_SPAN, kind: 2 });
    expect(root?.resource['service.name']).toBe('ringfence-e2e');
    expect(root?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'ringfence.server': 'traced',
      'gen_ai.tool.name': 'echo',
      'ringfence.decision': 'allowed',
    });
    const children = spans.filter((s) => s.parentSpanId === root?.spanId).map((s) => s.name);
    expect(children.sort()).toEqual(['ringfence.decide', 'ringfence.forward', 'ringfence.result']);
    const forward = spans.find((s) => s.name === 'ringfence.forward')!;

    // The server got the same trace, its parent the gateway's forward span: in the MCP `_meta`
    // and as the W3C HTTP header alike.
    const expected = `00-${CLIENT_TRACE}-${forward.spanId}-01`;
    expect(await calls()).toEqual([{ header: expected, meta: expected }]);

    // The audit entries name the trace; the seq on the span is the decision's.
    const entries = (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; type: string; refs: { trace_id?: string } });
    const ofCall = entries.filter((e) => e.type === 'mcp.decision' || e.type === 'mcp.result');
    expect(ofCall.filter((e) => e.refs.trace_id === CLIENT_TRACE).map((e) => e.type)).toEqual([
      'mcp.decision',
      'mcp.result',
    ]);
    const decision = ofCall.find((e) => e.type === 'mcp.decision' && e.refs.trace_id === CLIENT_TRACE);
    expect(root?.attributes['ringfence.audit.seq']).toBe(decision?.seq);
    const verified = await ringfence(['audit', 'verify'], { RINGFENCE_HOME: home });
    expect(verified.code, verified.stderr).toBe(0);

    // What the collector was sent: protobuf, with the configured header, and never an argument.
    expect(receiver.requests[0]?.path).toBe('/v1/traces');
    expect(receiver.requests[0]?.headers['content-type']).toBe('application/x-protobuf');
    expect(receiver.requests[0]?.headers['x-collector-key']).toBe('k 1');
    for (const r of receiver.requests) expect(r.body.toString('latin1')).not.toContain(ARGUMENT);
  });

  it('sends nothing and makes no tracer when no OTEL_* variable asks for traces; the client’s traceparent goes on as it came', async () => {
    const before = receiver.requests.length;
    const already = (await calls()).length;
    const served = await connectStdio(home, { OTEL_SERVICE_NAME: 'not-enough-to-turn-traces-on' });
    await served.client.callTool({
      name: 'traced_echo',
      arguments: { text: 'untraced' },
      _meta: { traceparent: CLIENT_TRACEPARENT },
    });
    await served.close();
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests.length).toBe(before);
    expect(served.stderr()).not.toContain('ringfence: traces:');
    expect((await calls()).slice(already)).toEqual([
      { header: CLIENT_TRACEPARENT, meta: CLIENT_TRACEPARENT },
    ]);
  });
});
