#!/usr/bin/env node
// What tracing costs the gateway per call (issue 25), in-process and without the network: the
// spans of one traced call (the call span with its attributes, decide, forward with its
// traceparent, result) recorded and queued, and their share of encoding the OTLP protobuf body a
// batch of 512 spans makes. Prints µs per call, medians of BENCH_ROUNDS rounds. With traces off
// there is nothing to measure here: `runForward` checks `deps.tracer` and takes the untraced path
// (calls.bench.mjs's ringfence_stdio vs BENCH_BASELINE shows that path against main).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const dist = (path) => import(join(repo, 'packages/gateway/dist/traces', path));
const { createTracer } = await dist('tracer.js');
const { encodeTraceRequest } = await dist('otlp.js');
const { SpanKind } = await dist('span.js');

const finished = [];
const tracer = createTracer(
  {
    target: { url: new URL('http://127.0.0.1:1/v1/traces'), headers: {} },
    // A queue that never sends during the measure: what is timed is the call's side only.
    batch: { delayMs: 3_600_000, maxQueue: 4 * CALLS + 8, maxBatch: 4 * CALLS + 8, timeoutMs: 1000 },
    resource: [['service.name', 'ringfence']],
    sampler: 'parentbased_always_on',
  },
  () => {},
  'bench',
  async () => {},
);
const client = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function oneCall() {
  const span = tracer.startCall('tools/call echo', client);
  span.set('mcp.method.name', 'tools/call').set('ringfence.server', 'up').set('gen_ai.tool.name', 'echo');
  const decide = span.child('ringfence.decide');
  span
    .set('ringfence.decision', 'allowed')
    .set('ringfence.rule', 'no-policy')
    .set('ringfence.audit.seq', 1234);
  decide.end();
  const forward = span.child('ringfence.forward', SpanKind.client);
  const traceparent = forward.traceparent();
  forward.end();
  const result = span.child('ringfence.result');
  result.set('ringfence.result.is_error', false).end();
  span.end();
  return traceparent;
}

// Warm-up: the JIT's first passes are not what a long-running gateway pays.
for (let i = 0; i < 5000; i++) oneCall();
for (let i = 0; i < 20; i++)
  encodeTraceRequest(
    { resource: [], scopeName: 'ringfence', scopeVersion: '' },
    tracer.exporter.queue.slice(0, 512),
  );

const record = [];
const encode = [];
for (let round = 0; round < ROUNDS; round++) {
  tracer.exporter.queue = [];
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) oneCall();
  record.push(Number(process.hrtime.bigint() - start) / 1e3 / CALLS);
  const spans = tracer.exporter.queue.slice(0, 512);
  finished.push(spans.length);
  const encodeStart = process.hrtime.bigint();
  const batches = 200;
  for (let b = 0; b < batches; b++)
    encodeTraceRequest(
      { resource: [['service.name', 'ringfence']], scopeName: 'ringfence', scopeVersion: '' },
      spans,
    );
  // 4 spans per call: a call's share of a batch's encoding.
  encode.push((Number(process.hrtime.bigint() - encodeStart) / 1e3 / (batches * spans.length)) * 4);
}
const r3 = (x) => Number(x.toFixed(3));
console.log(
  JSON.stringify(
    {
      record_and_queue_us_per_call: r3(median(record)),
      encode_us_per_call: r3(median(encode)),
      spans_per_call: 4,
      settings: { rounds: ROUNDS, calls: CALLS, node: process.version },
    },
    null,
    2,
  ),
);
