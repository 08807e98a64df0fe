import { expect, it } from 'vitest';
import { parseExposition, seriesOf } from './__fixtures__/exposition.js';
import { decisionLabel, GatewayMetrics, LIMITS } from './gateway-metrics.js';

function call(metrics: GatewayMetrics, server: string, name: string, allowed = true, rule = 'default') {
  const observed = metrics.begin({ method: 'tools/call', server, name });
  observed.decided(allowed ? { allowed, rule } : { allowed, rule, code: 'POLICY_DENIED' });
  if (allowed) {
    observed.forwarding();
    observed.answered(true);
  }
  observed.ended();
}

it('counts calls by server, tool, decision and rule, and times them', () => {
  const metrics = new GatewayMetrics();
  call(metrics, 'docs', 'search');
  call(metrics, 'docs', 'search');
  call(metrics, 'docs', 'delete', false, 'no-deletes');
  const samples = parseExposition(metrics.render());
  expect(seriesOf(samples, 'ringfence_calls_total')).toEqual([
    {
      name: 'ringfence_calls_total',
      labels: '{server="docs",tool="search",decision="allow",rule="default"}',
      value: 2,
    },
    {
      name: 'ringfence_calls_total',
      labels: '{server="docs",tool="delete",decision="deny",rule="no-deletes"}',
      value: 1,
    },
  ]);
  const count = seriesOf(samples, 'ringfence_call_duration_seconds_count');
  expect(count).toEqual([
    {
      name: 'ringfence_call_duration_seconds_count',
      labels: '{server="docs",method="tools/call"}',
      value: 3,
    },
  ]);
  const upstream = seriesOf(samples, 'ringfence_upstream_duration_seconds_count');
  expect(upstream.map((s) => [s.labels, s.value])).toEqual([
    ['{server="docs",method="tools/call",outcome="answered"}', 2],
  ]);
  // Cumulative buckets end at +Inf with the count.
  const buckets = seriesOf(samples, 'ringfence_call_duration_seconds_bucket').map((s) => s.value);
  expect(buckets.at(-1)).toBe(3);
  expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
});

it('names decisions from the refusal code', () => {
  expect(decisionLabel({ allowed: true, rule: 'r' })).toBe('allow');
  expect(decisionLabel({ allowed: true, rule: 'r', asked: true })).toBe('ask_allow');
  expect(decisionLabel({ allowed: false, rule: 'r', code: 'POLICY_DENIED' })).toBe('deny');
  expect(decisionLabel({ allowed: false, rule: 'r', code: 'ASK_DECLINED' })).toBe('ask_refuse');
  expect(decisionLabel({ allowed: false, rule: 'unavailable', code: 'UNAVAILABLE' })).toBe('unavailable');
  expect(decisionLabel({ allowed: false, rule: 'input-schema', code: 'INPUT_SCHEMA' })).toBe('refuse');
});

it('a hostile server (10,000 tool names with quotes and newlines) cannot break the format or grow the series', () => {
  const metrics = new GatewayMetrics();
  call(metrics, 'good', 'search');
  for (let i = 0; i < 10_000; i += 1)
    call(
      metrics,
      'evil',
      `t${i}"} 1\nringfence_calls_total{server="good",tool="search",decision="allow",rule="default`,
    );
  // And as many server names, each with its own tools.
  for (let i = 0; i < 1_000; i += 1) call(metrics, `srv\n${i}"`, `x${i}`);
  const samples = parseExposition(metrics.render());
  const calls = seriesOf(samples, 'ringfence_calls_total');
  // The good server's count is its own: no injected line added to it.
  expect(calls.find((s) => s.labels.startsWith('{server="good"'))?.value).toBe(1);
  const evil = calls.filter((s) => s.labels.startsWith('{server="evil"'));
  expect(evil.length).toBe(LIMITS.namesPerServer + 1);
  expect(evil.find((s) => s.labels.includes('tool="_other"'))?.value).toBe(10_000 - LIMITS.namesPerServer);
  const servers = new Set(calls.map((s) => /server="((?:[^"\\]|\\.)*)"/.exec(s.labels)![1]));
  expect(servers.size).toBe(LIMITS.servers + 1);
  // Every call counted, none lost to the caps.
  expect(calls.reduce((sum, s) => sum + s.value, 0)).toBe(1 + 10_000 + 1_000);
  // Bounded in all: the histograms too (buckets × label sets).
  expect(samples.length).toBeLessThan(20_000);
  const folded = samples.find((s) => s.labels === '{metric="ringfence_calls_total"}');
  expect(folded?.value).toBeGreaterThan(0);
});

it('reads gauges at each scrape, bounded alike', () => {
  const metrics = new GatewayMetrics();
  let open = 2;
  metrics.readFrom({
    sessions: () => [{ transport: 'http', count: open }],
    withheld: () =>
      Array.from({ length: 500 }, (_, i) => ({ server: `s${i}\n"`, definition: 'tool', reason: 'changed' })),
  });
  let samples = parseExposition(metrics.render());
  expect(seriesOf(samples, 'ringfence_sessions')).toEqual([
    { name: 'ringfence_sessions', labels: '{transport="http"}', value: 2 },
  ]);
  const withheld = seriesOf(samples, 'ringfence_withheld_definitions');
  expect(withheld.length).toBe(LIMITS.servers + 1);
  expect(withheld.reduce((sum, s) => sum + s.value, 0)).toBe(500);
  open = 0;
  samples = parseExposition(metrics.render());
  expect(seriesOf(samples, 'ringfence_sessions')[0]?.value).toBe(0);
});

it('counts audit writes, egress and container starts', () => {
  const metrics = new GatewayMetrics();
  metrics.audit.written(3, 2, 5);
  metrics.audit.failed();
  metrics.runtime.egress('docs', true);
  metrics.runtime.egress('docs', false);
  metrics.runtime.egress('docs', false);
  metrics.runtime.containerStarted('docs');
  metrics.runtime.containerFailed('docs');
  const samples = parseExposition(metrics.render());
  const value = (name: string, labels = '') =>
    samples.find((s) => s.name === name && s.labels === labels)?.value;
  expect(value('ringfence_audit_entries_total')).toBe(5);
  expect(value('ringfence_audit_write_failures_total')).toBe(1);
  expect(value('ringfence_audit_write_duration_seconds_count')).toBe(1);
  expect(value('ringfence_audit_fdatasync_duration_seconds_sum')).toBe(0.002);
  expect(value('ringfence_egress_total', '{server="docs",verdict="refused"}')).toBe(2);
  expect(value('ringfence_egress_total', '{server="docs",verdict="allowed"}')).toBe(1);
  expect(value('ringfence_container_starts_total', '{server="docs"}')).toBe(1);
  expect(value('ringfence_container_start_failures_total', '{server="docs"}')).toBe(1);
});
