#!/usr/bin/env node
// Per-call latency (p50, p99) and throughput with 1 and 8 concurrent callers: the SDK's client
// calling a tool through `ringfence mcp serve` (stdio) vs the same client calling the same
// upstream directly (streamable HTTP on loopback). Rounds are interleaved; medians are quoted.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT_TOTAL = Number(process.env.BENCH_CONCURRENT ?? 800);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function startUpstream(dir) {
  const tools = join(dir, 'tools.json');
  await writeFile(
    tools,
    JSON.stringify([
      {
        name: 'echo',
        description: 'Echo.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    ]),
  );
  await writeFile(join(dir, 'b.json'), '{}');
  const child = spawn(
    process.execPath,
    [join(repo, 'test/fixtures/tool-server.mjs'), tools, join(dir, 'b.json')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { child, url: `http://127.0.0.1:${JSON.parse(line).port}/mcp` };
}

async function run(client, label) {
  const args = { text: 'benchmark payload 0123456789' };
  for (let i = 0; i < 30; i++)
    await client.callTool({ name: label === 'direct' ? 'echo' : 'up_echo', arguments: args });
  const name = label === 'direct' ? 'echo' : 'up_echo';
  const latencies = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name, arguments: args });
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const seqStart = process.hrtime.bigint();
  let issued = 0;
  const worker = async () => {
    while (issued < CONCURRENT_TOTAL) {
      issued += 1;
      await client.callTool({ name, arguments: args });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const seconds = Number(process.hrtime.bigint() - seqStart) / 1e9;
  const sequentialSeconds = latencies.reduce((a, b) => a + b, 0) / 1000;
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rps1: SEQUENTIAL / sequentialSeconds,
    rps8: CONCURRENT_TOTAL / seconds,
  };
}

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-'));
const home = join(dir, 'home');
// A second home on tmpfs (where fsync costs nothing) separates the durable audit write from the rest.
const shmDir = existsSync('/dev/shm') ? await mkdtemp('/dev/shm/rf-bench-') : undefined;
const shmHome = shmDir ? join(shmDir, 'home') : undefined;
const upstream = await startUpstream(dir);
for (const target of [home, shmHome].filter(Boolean)) {
  const add = spawn(process.execPath, [cli, 'mcp', 'add', 'up', '--url', upstream.url], {
    env: { ...process.env, RINGFENCE_HOME: target },
    stdio: 'ignore',
  });
  await new Promise((resolve) => add.once('exit', resolve));
}

const direct = new Client({ name: 'bench-direct', version: '1' });
await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
const gated = new Client({ name: 'bench-gateway', version: '1' });
await gated.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', 'serve'],
    env: { ...process.env, RINGFENCE_HOME: home },
    stderr: 'ignore',
  }),
);

let gatedShm;
if (shmHome) {
  gatedShm = new Client({ name: 'bench-gateway-tmpfs', version: '1' });
  await gatedShm.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'mcp', 'serve'],
      env: { ...process.env, RINGFENCE_HOME: shmHome },
      stderr: 'ignore',
    }),
  );
}

const results = { direct: [], gateway: [], ...(gatedShm ? { gateway_audit_on_tmpfs: [] } : {}) };
for (let round = 0; round < ROUNDS; round++) {
  results.direct.push(await run(direct, 'direct'));
  results.gateway.push(await run(gated, 'gateway'));
  if (gatedShm) results.gateway_audit_on_tmpfs.push(await run(gatedShm, 'gateway'));
  process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
}
await direct.close();
await gated.close();
await gatedShm?.close();
if (shmDir) await rm(shmDir, { recursive: true, force: true });
upstream.child.kill();
await rm(dir, { recursive: true, force: true });

const summary = {};
for (const [label, rounds] of Object.entries(results)) {
  summary[label] = Object.fromEntries(
    ['p50', 'p99', 'rps1', 'rps8'].map((k) => [k, Number(median(rounds.map((r) => r[k])).toFixed(3))]),
  );
}
summary.added_p50_ms = Number((summary.gateway.p50 - summary.direct.p50).toFixed(3));
summary.added_p99_ms = Number((summary.gateway.p99 - summary.direct.p99).toFixed(3));
summary.throughput_ratio_1 = Number((summary.gateway.rps1 / summary.direct.rps1).toFixed(3));
summary.throughput_ratio_8 = Number((summary.gateway.rps8 / summary.direct.rps8).toFixed(3));
if (summary.gateway_audit_on_tmpfs) {
  summary.added_p50_ms_audit_on_tmpfs = Number(
    (summary.gateway_audit_on_tmpfs.p50 - summary.direct.p50).toFixed(3),
  );
  summary.throughput_ratio_8_audit_on_tmpfs = Number(
    (summary.gateway_audit_on_tmpfs.rps8 / summary.direct.rps8).toFixed(3),
  );
}
summary.settings = {
  rounds: ROUNDS,
  sequential_calls: SEQUENTIAL,
  concurrent_calls: CONCURRENT_TOTAL,
  node: process.version,
};
console.log(JSON.stringify(summary, null, 2));
