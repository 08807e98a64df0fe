#!/usr/bin/env node
// The call path side by side, in one run: the SDK's client calling an `echo` tool on a streamable
// HTTP upstream on loopback, directly and through each relay:
//   stdio client → ringfence `mcp serve`        → HTTP upstream
//   stdio client → supergateway --streamableHttp → HTTP upstream
//   HTTP client  → ringfence `mcp serve --http`  → HTTP upstream
//   stdio client → ringfence `mcp serve` with OTLP traces on → HTTP upstream (ringfence_stdio_traced)
//   HTTP client  → mcp-proxy → (stdio) supergateway → HTTP upstream   (mcp-proxy only speaks stdio
//                  upstream; only mcp-proxy's own process is counted for its CPU)
// and `mcp serve --metrics` (ringfence_stdio_metrics) beside the same gateway without it.
// Per relay: p50/p99 of sequential calls, calls/s with 1 and 8 callers, and the relay process's
// CPU time (user+system, all its threads, from /proc) per call. Rounds are interleaved so a noisy
// neighbour hits every relay alike; medians over rounds are quoted, with ratios against direct.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cpuMs, freePort, median, percentile, startEchoUpstream } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const supergateway = join(repo, 'node_modules/supergateway/dist/index.js');
const mcpProxy = join(repo, 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT_TOTAL = Number(process.env.BENCH_CONCURRENT ?? 800);
const ONLY = process.env.BENCH_ONLY?.split(',');
// The `echo` text's length: the arguments and the result each carry it (default: a short text).
const PAYLOAD_BYTES = Number(process.env.BENCH_PAYLOAD_BYTES ?? 0);
// Another checkout (built) to measure against in the same run: its `mcp serve` joins as
// `baseline_stdio` / `baseline_http`, so a change is judged by ratios taken under the same load.
const BASELINE = process.env.BENCH_BASELINE;
const baselineCli = BASELINE && join(BASELINE, 'packages/cli/bin/run.js');

const round3 = (x) => Number(x.toFixed(3));

/** Resolves once `url` answers HTTP at all (any status). */
async function waitForHttp(url, child) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the relay exited (${child.exitCode})`);
    const ok = await fetch(url, { method: 'GET' }).then(
      () => true,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

async function stdioRelay(name, command, args, env) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env, ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: `bench-${name}`, version: '1' });
  await client.connect(transport);
  return { client, pid: transport.pid, close: () => client.close() };
}

async function httpRelay(name, args, env, url, headers = {}) {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  await waitForHttp(url, child);
  const client = new Client({ name: `bench-${name}`, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return {
    client,
    pid: child.pid,
    close: async () => {
      await client.close();
      child.kill();
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    },
  };
}

const WARM = Number(process.env.BENCH_WARM ?? 30);

async function run(target, upstreamPid) {
  const { client, tool, pid } = target;
  const args = { text: PAYLOAD_BYTES > 0 ? 'x'.repeat(PAYLOAD_BYTES) : 'benchmark payload 0123456789' };
  // V8 keeps compiling hot functions on its background threads (counted in the relay's CPU) for
  // the first few thousand calls: BENCH_WARM (default 30) calls first measure the steady state.
  for (let i = 0; i < (target.warmed ? 30 : WARM); i++)
    await client.callTool({ name: tool, arguments: args });
  target.warmed = true;
  const cpuStart = pid ? cpuMs(pid) : 0;
  // The client (this process) and the upstream share the 2 cores with the relay: their CPU per call
  // bounds what any relay's throughput can be on this machine (see `ceilings` below).
  const clientStart = process.cpuUsage();
  const upstreamStart = cpuMs(upstreamPid);
  const latencies = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name: tool, arguments: args });
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const concurrentStart = process.hrtime.bigint();
  let issued = 0;
  const caller = async () => {
    while (issued < CONCURRENT_TOTAL) {
      issued += 1;
      await client.callTool({ name: tool, arguments: args });
    }
  };
  await Promise.all(Array.from({ length: 8 }, caller));
  const seconds = Number(process.hrtime.bigint() - concurrentStart) / 1e9;
  const cpu = pid ? cpuMs(pid) - cpuStart : undefined;
  const clientUsage = process.cpuUsage(clientStart);
  const calls = SEQUENTIAL + CONCURRENT_TOTAL;
  const clientMs = (clientUsage.user + clientUsage.system) / 1000;
  const upstreamMs = cpuMs(upstreamPid) - upstreamStart;
  const sequentialSeconds = latencies.reduce((a, b) => a + b, 0) / 1000;
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rps1: SEQUENTIAL / sequentialSeconds,
    rps8: CONCURRENT_TOTAL / seconds,
    ...(cpu !== undefined ? { cpu_ms_per_call: cpu / calls } : {}),
    client_cpu_ms_per_call: clientMs / calls,
    upstream_cpu_ms_per_call: upstreamMs / calls,
  };
}

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-'));
const home = join(dir, 'home');
// A second home on tmpfs (where fsync costs nothing) separates the durable audit write from the rest.
const shmDir = existsSync('/dev/shm') ? await mkdtemp('/dev/shm/rf-bench-') : undefined;
const shmHome = shmDir ? join(shmDir, 'home') : undefined;
const upstream = await startEchoUpstream(dir);
const baseHome = baselineCli && join(dir, 'baseline-home');
// `mcp serve --metrics` beside the same gateway without it: what counting costs per call.
const metricsHome = join(dir, 'metrics-home');
for (const [target, via] of [
  [home, cli],
  [metricsHome, cli],
  [shmHome, cli],
  [baseHome, baselineCli],
].filter(([target]) => target)) {
  const add = spawn(process.execPath, [via, 'mcp', 'add', 'up', '--url', upstream.url], {
    env: { ...process.env, RINGFENCE_HOME: target },
    stdio: 'ignore',
  });
  await new Promise((resolve) => add.once('exit', resolve));
}

/** An OTLP/HTTP receiver that drops what it gets, counting spans' bytes only. */
async function startOtlpSink() {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk) => {
      bytes += chunk.length;
    });
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    bytes: () => bytes,
    close: () => server.close(),
  };
}

const token = 'bench-token-0123456789abcdef0123456789abcdef';
const targets = {};
let otlpSink;
const want = (name) => !ONLY || ONLY.includes(name);
try {
  if (want('direct')) {
    const client = new Client({ name: 'bench-direct', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    targets.direct = { client, tool: 'echo', close: () => client.close() };
  }
  if (want('ringfence_stdio'))
    targets.ringfence_stdio = {
      ...(await stdioRelay('rf', process.execPath, [cli, 'mcp', 'serve'], { RINGFENCE_HOME: home })),
      tool: 'up_echo',
    };
  if (baselineCli && want('baseline_stdio'))
    targets.baseline_stdio = {
      ...(await stdioRelay('rf-base', process.execPath, [baselineCli, 'mcp', 'serve'], {
        RINGFENCE_HOME: baseHome,
      })),
      tool: 'up_echo',
    };
  if (want('ringfence_stdio_traced')) {
    // Traces on (OTLP/HTTP to a sink in this process that reads and drops each batch): the cost of
    // the spans of every call, against ringfence_stdio with traces off.
    otlpSink = await startOtlpSink();
    targets.ringfence_stdio_traced = {
      ...(await stdioRelay('rf-traced', process.execPath, [cli, 'mcp', 'serve'], {
        RINGFENCE_HOME: home,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.url,
      })),
      tool: 'up_echo',
    };
  }
  if (want('ringfence_stdio_metrics')) {
    const metricsPort = await freePort();
    targets.ringfence_stdio_metrics = {
      ...(await stdioRelay(
        'rf-metrics',
        process.execPath,
        [cli, 'mcp', 'serve', '--metrics', `127.0.0.1:${metricsPort}`],
        { RINGFENCE_HOME: metricsHome },
      )),
      tool: 'up_echo',
    };
  }
  if (shmHome && want('ringfence_stdio_audit_on_tmpfs'))
    targets.ringfence_stdio_audit_on_tmpfs = {
      ...(await stdioRelay('rf-tmpfs', process.execPath, [cli, 'mcp', 'serve'], { RINGFENCE_HOME: shmHome })),
      tool: 'up_echo',
    };
  if (want('supergateway_stdio'))
    targets.supergateway_stdio = {
      ...(await stdioRelay('sg', process.execPath, [
        supergateway,
        '--streamableHttp',
        upstream.url,
        '--logLevel',
        'none',
      ])),
      tool: 'echo',
    };
  if (want('ringfence_http')) {
    const port = await freePort();
    targets.ringfence_http = {
      ...(await httpRelay(
        'rf-http',
        [cli, 'mcp', 'serve', '--http', `127.0.0.1:${port}`],
        { RINGFENCE_HOME: home, RINGFENCE_MCP_TOKEN: token },
        `http://127.0.0.1:${port}/mcp`,
        { authorization: `Bearer ${token}` },
      )),
      tool: 'up_echo',
    };
  }
  if (baselineCli && want('baseline_http')) {
    const port = await freePort();
    targets.baseline_http = {
      ...(await httpRelay(
        'rf-base-http',
        [baselineCli, 'mcp', 'serve', '--http', `127.0.0.1:${port}`],
        { RINGFENCE_HOME: baseHome, RINGFENCE_MCP_TOKEN: token },
        `http://127.0.0.1:${port}/mcp`,
        { authorization: `Bearer ${token}` },
      )),
      tool: 'up_echo',
    };
  }
  if (want('mcp_proxy_http')) {
    const port = await freePort();
    targets.mcp_proxy_http = {
      ...(await httpRelay(
        'mcp-proxy',
        [
          mcpProxy,
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--server',
          'stream',
          '--no-eventStore',
          '--',
          process.execPath,
          supergateway,
          '--streamableHttp',
          upstream.url,
          '--logLevel',
          'none',
        ],
        {},
        `http://127.0.0.1:${port}/mcp`,
      )),
      tool: 'echo',
    };
  }

  const results = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  // Whichever relay runs first in a round reads several per cent cheaper (caches, the upstream's
  // warm-up): the order is rotated each round so no variant always has that place.
  const order = Object.entries(targets);
  for (let round = 0; round < ROUNDS; round++) {
    const rotated = [...order.slice(round % order.length), ...order.slice(0, round % order.length)];
    for (const [name, target] of rotated) results[name].push(await run(target, upstream.child.pid));
    process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
  }

  const summary = {};
  for (const [label, rounds] of Object.entries(results)) {
    summary[label] = Object.fromEntries(
      Object.keys(rounds[0]).map((k) => [k, round3(median(rounds.map((r) => r[k])))]),
    );
  }
  const d = summary.direct;
  const ratios = {};
  for (const [label, s] of Object.entries(summary)) {
    if (label === 'direct' || !d) continue;
    ratios[label] = {
      added_p50_ms: round3(s.p50 - d.p50),
      throughput_ratio_8_vs_direct: round3(s.rps8 / d.rps8),
    };
  }
  // With every process busy, calls/s ≤ cores ÷ (CPU per call of client + relay + upstream). The
  // best 8-caller ratio any relay can reach against direct on this machine is therefore
  // (client + upstream, direct) ÷ (client + relay + upstream, through it) — if direct is CPU-bound.
  const cpuPerCall = (s) => (s.cpu_ms_per_call ?? 0) + s.client_cpu_ms_per_call + s.upstream_cpu_ms_per_call;
  const ceilings = {};
  for (const [label, s] of Object.entries(summary)) {
    if (label === 'direct' || !d) continue;
    ceilings[label] = {
      total_cpu_ms_per_call: round3(cpuPerCall(s)),
      cpu_bound_throughput_ceiling_vs_direct: round3(cpuPerCall(d) / cpuPerCall(s)),
      // A relay's event loop is one thread: it cannot pass 1000 ÷ its CPU ms per call calls/s
      // (a little more in fact, as GC and I/O threads share the count).
      ...(s.cpu_ms_per_call
        ? { relay_thread_bound_vs_direct: round3(1000 / s.cpu_ms_per_call / d.rps8) }
        : {}),
    };
  }
  const cpuRatio = (a, b) =>
    summary[a]?.cpu_ms_per_call && summary[b]?.cpu_ms_per_call
      ? round3(summary[a].cpu_ms_per_call / summary[b].cpu_ms_per_call)
      : undefined;
  const goals = {
    cpu_stdio_vs_supergateway: cpuRatio('ringfence_stdio', 'supergateway_stdio'),
    cpu_http_vs_mcp_proxy: cpuRatio('ringfence_http', 'mcp_proxy_http'),
    cpu_stdio_traced_vs_untraced: cpuRatio('ringfence_stdio_traced', 'ringfence_stdio'),
    cpu_stdio_metrics_on_vs_off: cpuRatio('ringfence_stdio_metrics', 'ringfence_stdio'),
    ...(baselineCli
      ? {
          baseline_cpu_stdio_vs_supergateway: cpuRatio('baseline_stdio', 'supergateway_stdio'),
          baseline_cpu_http_vs_mcp_proxy: cpuRatio('baseline_http', 'mcp_proxy_http'),
          cpu_stdio_vs_baseline: cpuRatio('ringfence_stdio', 'baseline_stdio'),
          cpu_http_vs_baseline: cpuRatio('ringfence_http', 'baseline_http'),
        }
      : {}),
  };
  console.log(
    JSON.stringify(
      {
        summary,
        ratios,
        ceilings,
        goals,
        ...(otlpSink ? { otlp_bytes_received: otlpSink.bytes() } : {}),
        settings: {
          rounds: ROUNDS,
          sequential_calls: SEQUENTIAL,
          concurrent_calls: CONCURRENT_TOTAL,
          node: process.version,
        },
      },
      null,
      2,
    ),
  );
} finally {
  for (const target of Object.values(targets)) await target.close().catch(() => {});
  otlpSink?.close();
  if (shmDir) await rm(shmDir, { recursive: true, force: true });
  upstream.child.kill();
  await rm(dir, { recursive: true, force: true });
}
