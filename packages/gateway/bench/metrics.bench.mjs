#!/usr/bin/env node
// What `mcp serve --metrics` adds to one forwarded request in the gateway's thread (issue 25):
// the pipeline's observer hooks (begin, decided, forwarding, answered, ended) on a known tool, on
// a flood of new names from a hostile server (past the label caps), and one scrape's render.
// Prints ns per call and ms per render, medians of BENCH_ROUNDS rounds. The whole call path with
// metrics on and off is `calls.bench.mjs` (ringfence_stdio_metrics against ringfence_stdio).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 200_000);
const { GatewayMetrics } = await import(join(repo, 'packages/gateway/dist/metrics/index.js'));

const metrics = new GatewayMetrics();
const known = { method: 'tools/call', server: 'docs', name: 'search' };
const allow = { allowed: true, rule: 'default' };
const observe = (call) => {
  const observed = metrics.begin(call);
  observed.decided(allow);
  observed.forwarding();
  observed.answered(true);
  observed.ended();
};
// A hostile server's names: distinct, long, quoted; made before timing so only the hooks are timed.
const hostile = Array.from({ length: CALLS }, (_, i) => ({
  method: 'tools/call',
  server: 'evil',
  name: `t${i}"} 1\nringfence_calls_total{server="docs"`,
}));
const timeNs = (work) => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) work(i);
  return Number(process.hrtime.bigint() - start) / CALLS;
};

const rounds = { known_ns_per_call: [], hostile_ns_per_call: [], render_ms: [] };
for (let round = 0; round < ROUNDS; round++) {
  rounds.known_ns_per_call.push(timeNs(() => observe(known)));
  rounds.hostile_ns_per_call.push(timeNs((i) => observe(hostile[i])));
  const start = process.hrtime.bigint();
  const text = metrics.render();
  rounds.render_ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  rounds.lines ??= text.split('\n').length;
}
const summary = Object.fromEntries(
  Object.entries(rounds).map(([k, v]) => [k, Array.isArray(v) ? Number(median(v).toFixed(3)) : v]),
);
console.log(
  JSON.stringify({ summary, settings: { rounds: ROUNDS, calls: CALLS, node: process.version } }, null, 2),
);
