#!/usr/bin/env node
// Contained servers: time to ready (initialize + tools/list answered) for 1 and for 5 servers
// (they start concurrently) vs `docker run -i` of the same image, per-call latency and 8-caller
// throughput through the gateway into a container vs `docker run -i` driven directly by the same
// MCP client. Rounds are interleaved; medians are quoted.
// BENCH_BASELINE=/path/to/other/built/checkout adds its `mcp serve` as `baseline` beside this
// one in the same rounds (a change judged against the code before it under the same load);
// BENCH_READY=0 skips the time-to-ready measurements (calls only), BENCH_READY_ONLY=1 the calls
// (time to ready only). Time to ready is measured for `mcp serve` with 1 and with 5 registered
// servers, against one `docker run -i` and against 5 `docker run -i` started at once (each with
// its own client; ready when all five have listed their tools); with BENCH_BASELINE, the baseline's
// `mcp serve` too. Each variant also answers
// CALLS/5 sequential calls with 1 MiB (`call_1mib_answer_ms`): the cost of moving bytes.
// CPU per call is each process's user + system time over the round's calls (sequential and 8
// callers together): the client's (this process), the relay's (the gateway, or the `docker` CLI
// under `docker run -i`), dockerd's and the server's in its container, from /proc (10 ms ticks).
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createDockerClient } from '@ringfence/gateway/runtime';
import { buildProbeImage, cpuMs, median, percentile } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENT_TOTAL = Number(process.env.BENCH_CONCURRENT ?? 400);
const READY = process.env.BENCH_READY !== '0';
const WARM = Number(process.env.BENCH_WARM ?? 20);
const READY_ONLY = process.env.BENCH_READY_ONLY === '1';
const BASELINE = process.env.BENCH_BASELINE;
const baselineCli = BASELINE && join(BASELINE, 'packages/cli/bin/run.js');

/** dockerd's pid when it runs in this pid namespace (its CPU per call is then reported too). */
const dockerdPid = (() => {
  const r = spawnSync('pgrep', ['-x', 'dockerd']);
  const pid = Number(r.stdout?.toString().trim().split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
})();

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

const docker = createDockerClient();
const probe = await buildProbeImage(docker);

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-containers-'));
async function homeWith(count, via = cli, name = `home-${count}`) {
  const home = join(dir, name);
  for (let i = 0; i < count; i++) {
    const r = spawnSync(process.execPath, [via, 'mcp', 'add', `s${i}`, '--image', probe.ref], {
      env: { ...process.env, RINGFENCE_HOME: home },
    });
    if (r.status !== 0) throw new Error(r.stderr.toString());
  }
  return home;
}
const homes = {
  1: await homeWith(1),
  ...(READY ? { 5: await homeWith(5) } : {}),
  ...(baselineCli ? { baseline: await homeWith(1, baselineCli, 'home-baseline') } : {}),
  ...(baselineCli && READY ? { baseline5: await homeWith(5, baselineCli, 'home-baseline-5') } : {}),
};

let sessions = 0;
async function gatewayClient(home, via = cli) {
  const client = new Client({ name: 'bench', version: '1' });
  const session = `bench-${process.pid}-${++sessions}`;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [via, 'mcp', 'serve', '--session', session],
    env: { ...process.env, RINGFENCE_HOME: home },
    stderr: 'ignore',
  });
  await client.connect(transport);
  client.relayPid = transport.pid;
  client.container = `ringfence-mcp-s0-${session}`;
  return client;
}

async function timeToReady(count, home = homes[count], via = cli) {
  const start = process.hrtime.bigint();
  const client = await gatewayClient(home, via);
  const { tools } = await client.listTools();
  const elapsed = ms(start);
  if (tools.length !== count) throw new Error(`expected ${count} tools, got ${tools.length}`);
  await client.close();
  return elapsed;
}

async function latencies(client, name, args = {}, count = CALLS) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name, arguments: args });
    out.push(ms(start));
  }
  return out;
}

/** Calls per second with 8 callers sharing one client (one session, as an AI client would). */
async function throughput(client, name) {
  let issued = 0;
  const start = process.hrtime.bigint();
  const caller = async () => {
    while (issued < CONCURRENT_TOTAL) {
      issued += 1;
      await client.callTool({ name, arguments: {} });
    }
  };
  await Promise.all(Array.from({ length: 8 }, caller));
  return CONCURRENT_TOTAL / (ms(start) / 1000);
}

async function directClient() {
  const client = new Client({ name: 'bench-direct', version: '1' });
  const name = `ringfence-bench-direct-${process.pid}-${++sessions}`;
  const transport = new StdioClientTransport({
    command: 'docker',
    args: ['run', '-i', '--rm', '--name', name, '--network', 'none', probe.ref],
    stderr: 'ignore',
  });
  await client.connect(transport);
  client.relayPid = transport.pid;
  client.container = name;
  return client;
}

async function directReady() {
  const start = process.hrtime.bigint();
  const client = await directClient();
  await client.listTools();
  const elapsed = ms(start);
  await client.close();
  return elapsed;
}

/** COUNT `docker run -i` started at once, each with its own client: until every one listed its tools. */
async function directReadyConcurrent(count) {
  const start = process.hrtime.bigint();
  const clients = await Promise.all(
    Array.from({ length: count }, async () => {
      const client = await directClient();
      await client.listTools();
      return client;
    }),
  );
  const elapsed = ms(start);
  await Promise.all(clients.map((client) => client.close()));
  return elapsed;
}

const ready = { 1: [], 5: [], direct: [], direct5: [], baseline1: [], baseline5: [] };
/** One round's time-to-ready measurements; which goes first turns with the round. */
const readySteps = [
  async () => ready[1].push(await timeToReady(1)),
  async () => ready.direct.push(await directReady()),
  async () => ready[5].push(await timeToReady(5)),
  async () => ready.direct5.push(await directReadyConcurrent(5)),
  ...(baselineCli
    ? [
        async () => ready.baseline1.push(await timeToReady(1, homes.baseline, baselineCli)),
        async () => ready.baseline5.push(await timeToReady(5, homes.baseline5, baselineCli)),
      ]
    : []),
];
const variants = {
  gateway: { connect: () => gatewayClient(homes[1]), tool: 's0_probe' },
  ...(baselineCli
    ? { baseline: { connect: () => gatewayClient(homes.baseline, baselineCli), tool: 's0_probe' } }
    : {}),
  direct: { connect: directClient, tool: 'probe' },
};
const calls = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const rps8 = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
/** Sequential calls answered with 1 MiB (the probe's `answerBytes`): what moving bytes costs. */
const big = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const BIG_CALLS = Math.max(5, Math.round(CALLS / 5));
const relayCpu = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const dockerdCpu = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const serverCpu = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const clientCpu = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
/** The host pid of the server's process in its container (NaN if the engine does not say). */
const serverPid = async (container) =>
  Number((await docker.getContainer(container).inspect()).State?.Pid ?? Number.NaN);
const names = Object.keys(variants);
for (let round = 0; round < ROUNDS; round++) {
  if (READY) {
    for (let i = 0; i < readySteps.length; i++) await readySteps[(i + round) % readySteps.length]();
  }
  // Each variant goes first in turn: the position in a round moves the figures a few per cent.
  for (const name of READY_ONLY ? [] : names.map((_, i) => names[(i + round) % names.length])) {
    const { connect, tool } = variants[name];
    const client = await connect();
    // BENCH_WARM calls first, the same number for every variant: V8 compiles a new gateway's hot
    // functions on its background threads for its first few thousand calls (start-up cost that a
    // long-lived gateway pays once; the default, 20, keeps it in the figures).
    for (let i = 0; i < WARM; i++) await client.callTool({ name: tool, arguments: {} });
    const server = await serverPid(client.container);
    const relay0 = cpuMs(client.relayPid);
    const server0 = cpuMs(server);
    const dockerd0 = dockerdPid ? cpuMs(dockerdPid) : Number.NaN;
    const client0 = process.cpuUsage();
    calls[name].push(...(await latencies(client, tool)));
    rps8[name].push(await throughput(client, tool));
    const count = CALLS + CONCURRENT_TOTAL;
    relayCpu[name].push((cpuMs(client.relayPid) - relay0) / count);
    serverCpu[name].push((cpuMs(server) - server0) / count);
    const used = process.cpuUsage(client0);
    // This process runs only the client while the calls run.
    clientCpu[name].push((used.user + used.system) / 1000 / count);
    if (dockerdPid) dockerdCpu[name].push((cpuMs(dockerdPid) - dockerd0) / count);
    big[name].push(...(await latencies(client, tool, { answerBytes: 1024 * 1024 }, BIG_CALLS)));
    await client.close();
  }
  process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
}
await rm(dir, { recursive: true, force: true });

const p = (xs, q) => Number(percentile(xs, q).toFixed(3));
const cpu = (xs) => (xs.length && !xs.some(Number.isNaN) ? Number(median(xs).toFixed(3)) : undefined);
const summary = {
  ...(READY
    ? {
        ready_ms: {
          one: Math.round(median(ready[1])),
          five: Math.round(median(ready[5])),
          ratio_five_to_one: Number((median(ready[5]) / median(ready[1])).toFixed(2)),
          direct_docker_run: Math.round(median(ready.direct)),
          five_direct_docker_run: Math.round(median(ready.direct5)),
          ratio_one_to_docker_run: Number((median(ready[1]) / median(ready.direct)).toFixed(2)),
          ready_one_vs_docker_run: Number((median(ready[1]) / median(ready.direct)).toFixed(2)),
          ready_five_vs_five_docker_run: Number((median(ready[5]) / median(ready.direct5)).toFixed(2)),
          ...(baselineCli
            ? {
                baseline_one: Math.round(median(ready.baseline1)),
                baseline_five: Math.round(median(ready.baseline5)),
                baseline_one_vs_docker_run: Number(
                  (median(ready.baseline1) / median(ready.direct)).toFixed(2),
                ),
                baseline_five_vs_five_docker_run: Number(
                  (median(ready.baseline5) / median(ready.direct5)).toFixed(2),
                ),
              }
            : {}),
          samples: Object.fromEntries(
            Object.entries(ready)
              .filter(([, xs]) => xs.length > 0)
              .map(([name, xs]) => [name, xs.map(Math.round)]),
          ),
        },
      }
    : {}),
  ...(READY_ONLY
    ? { settings: { rounds: ROUNDS, node: process.version, ...(BASELINE ? { baseline: BASELINE } : {}) } }
    : {}),
};
const readyRatios = READY
  ? {
      ready_one_vs_docker_run: summary.ready_ms.ready_one_vs_docker_run,
      ready_five_vs_five_docker_run: summary.ready_ms.ready_five_vs_five_docker_run,
    }
  : {};
if (READY_ONLY) {
  summary.ratios = { gateway: readyRatios };
  console.log(JSON.stringify(summary, null, 2));
  process.exit(0);
}
Object.assign(summary, {
  call_ms: Object.fromEntries(
    names.map((name) => [
      name === 'direct' ? 'direct_docker_run' : name,
      { p50: p(calls[name], 50), p99: p(calls[name], 99) },
    ]),
  ),
  call_1mib_answer_ms: Object.fromEntries(
    names.map((name) => [name === 'direct' ? 'direct_docker_run' : name, { p50: p(big[name], 50) }]),
  ),
  calls_per_s_8_callers: Object.fromEntries(
    names.map((name) => [name === 'direct' ? 'direct_docker_run' : name, Math.round(median(rps8[name]))]),
  ),
  cpu_ms_per_call: Object.fromEntries(
    names.map((name) => [
      name === 'direct' ? 'direct_docker_run' : name,
      {
        client: cpu(clientCpu[name]),
        relay: cpu(relayCpu[name]),
        dockerd: cpu(dockerdCpu[name]),
        server: cpu(serverCpu[name]),
      },
    ]),
  ),
  settings: {
    rounds: ROUNDS,
    calls_per_round: CALLS,
    concurrent_calls: CONCURRENT_TOTAL,
    node: process.version,
    ...(BASELINE ? { baseline: BASELINE } : {}),
  },
});
const ratios = {};
for (const name of names.filter((n) => n !== 'direct')) {
  ratios[name] = {
    ...(name === 'gateway' ? readyRatios : {}),
    added_p50_ms: Number((percentile(calls[name], 50) - percentile(calls.direct, 50)).toFixed(3)),
    p50_vs_docker_run: Number((percentile(calls[name], 50) / percentile(calls.direct, 50)).toFixed(2)),
    calls_per_s_vs_docker_run: Number((median(rps8[name]) / median(rps8.direct)).toFixed(2)),
    p50_1mib_vs_docker_run: Number((percentile(big[name], 50) / percentile(big.direct, 50)).toFixed(2)),
  };
}
if (baselineCli) {
  ratios.gateway.p50_vs_baseline = Number(
    (percentile(calls.gateway, 50) / percentile(calls.baseline, 50)).toFixed(2),
  );
  ratios.gateway.calls_per_s_vs_baseline = Number((median(rps8.gateway) / median(rps8.baseline)).toFixed(2));
  ratios.gateway.p50_1mib_vs_baseline = Number(
    (percentile(big.gateway, 50) / percentile(big.baseline, 50)).toFixed(2),
  );
  const a = cpu(relayCpu.gateway);
  const b = cpu(relayCpu.baseline);
  if (a !== undefined && b !== undefined) ratios.gateway.relay_cpu_vs_baseline = Number((a / b).toFixed(2));
}
summary.ratios = ratios;
console.log(JSON.stringify(summary, null, 2));
