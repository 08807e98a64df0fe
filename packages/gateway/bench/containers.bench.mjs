#!/usr/bin/env node
// Contained servers: time to ready (initialize + tools/list answered) for 1 and for 5 servers
// (they start concurrently) vs `docker run -i` of the same image, per-call latency and 8-caller
// throughput through the gateway into a container vs `docker run -i` driven directly by the same
// MCP client. Rounds are interleaved; medians are quoted.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildContextImage, buildNodeBaseImage } from '@ringfence/gateway/images';
import { createDockerClient } from '@ringfence/gateway/runtime';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENT_TOTAL = Number(process.env.BENCH_CONCURRENT ?? 400);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

const docker = createDockerClient();
const base = await buildNodeBaseImage(docker);
const probe = await buildContextImage(docker, {
  repository: 'ringfence-bench/probe',
  context: {
    dockerfile: `FROM ${base.ref}\nCOPY probe-server.mjs /app/probe-server.mjs\nUSER 65532:65532\nENTRYPOINT ["node","/app/probe-server.mjs"]\n`,
    files: [
      {
        path: 'probe-server.mjs',
        mode: 0o644,
        source: { hostPath: join(repo, 'test/fixtures/probe-server.mjs') },
      },
    ],
  },
});

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-containers-'));
async function homeWith(count) {
  const home = join(dir, `home-${count}`);
  for (let i = 0; i < count; i++) {
    const r = spawnSync(process.execPath, [cli, 'mcp', 'add', `s${i}`, '--image', probe.ref], {
      env: { ...process.env, RINGFENCE_HOME: home },
    });
    if (r.status !== 0) throw new Error(r.stderr.toString());
  }
  return home;
}
const homes = { 1: await homeWith(1), 5: await homeWith(5) };

async function gatewayClient(home) {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'mcp', 'serve'],
      env: { ...process.env, RINGFENCE_HOME: home },
      stderr: 'ignore',
    }),
  );
  return client;
}

async function timeToReady(count) {
  const start = process.hrtime.bigint();
  const client = await gatewayClient(homes[count]);
  const { tools } = await client.listTools();
  const elapsed = ms(start);
  if (tools.length !== count) throw new Error(`expected ${count} tools, got ${tools.length}`);
  await client.close();
  return elapsed;
}

async function latencies(client, name) {
  for (let i = 0; i < 20; i++) await client.callTool({ name, arguments: {} });
  const out = [];
  for (let i = 0; i < CALLS; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name, arguments: {} });
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
  await client.connect(
    new StdioClientTransport({
      command: 'docker',
      args: ['run', '-i', '--rm', '--network', 'none', probe.ref],
      stderr: 'ignore',
    }),
  );
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

const ready = { 1: [], 5: [], direct: [] };
const calls = { gateway: [], direct: [] };
const rps8 = { gateway: [], direct: [] };
for (let round = 0; round < ROUNDS; round++) {
  ready[1].push(await timeToReady(1));
  ready.direct.push(await directReady());
  ready[5].push(await timeToReady(5));
  const gated = await gatewayClient(homes[1]);
  calls.gateway.push(...(await latencies(gated, 's0_probe')));
  rps8.gateway.push(await throughput(gated, 's0_probe'));
  await gated.close();
  const direct = await directClient();
  calls.direct.push(...(await latencies(direct, 'probe')));
  rps8.direct.push(await throughput(direct, 'probe'));
  await direct.close();
  process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
}
await rm(dir, { recursive: true, force: true });

const summary = {
  ready_ms: {
    one: Math.round(median(ready[1])),
    five: Math.round(median(ready[5])),
    ratio_five_to_one: Number((median(ready[5]) / median(ready[1])).toFixed(2)),
    direct_docker_run: Math.round(median(ready.direct)),
    ratio_one_to_docker_run: Number((median(ready[1]) / median(ready.direct)).toFixed(2)),
  },
  call_ms: {
    gateway: {
      p50: Number(percentile(calls.gateway, 50).toFixed(3)),
      p99: Number(percentile(calls.gateway, 99).toFixed(3)),
    },
    direct_docker_run: {
      p50: Number(percentile(calls.direct, 50).toFixed(3)),
      p99: Number(percentile(calls.direct, 99).toFixed(3)),
    },
  },
  calls_per_s_8_callers: {
    gateway: Math.round(median(rps8.gateway)),
    direct_docker_run: Math.round(median(rps8.direct)),
    ratio: Number((median(rps8.gateway) / median(rps8.direct)).toFixed(2)),
  },
  settings: {
    rounds: ROUNDS,
    calls_per_round: CALLS,
    concurrent_calls: CONCURRENT_TOTAL,
    node: process.version,
  },
};
summary.call_ms.added_p50 = Number(
  (summary.call_ms.gateway.p50 - summary.call_ms.direct_docker_run.p50).toFixed(3),
);
summary.call_ms.ratio_p50 = Number(
  (summary.call_ms.gateway.p50 / summary.call_ms.direct_docker_run.p50).toFixed(2),
);
console.log(JSON.stringify(summary, null, 2));
