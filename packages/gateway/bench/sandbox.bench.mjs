#!/usr/bin/env node
// ringfence's own sandbox tools (docs/sandboxes.md), measured through `mcp serve --sandbox-tools`
// with a real SDK client (the whole path: JSON-RPC, schema check, policy decision, audit entries,
// the engine calls), against the docker CLI doing the same on the same engine:
//  1. `sandbox_run` of a trivial command vs `docker exec` of it on the same container.
//     node-base has no shell or coreutils, so the trivial command is `node -e 0` for both.
//  2. `sandbox_checkpoint` + `sandbox_rewind` of a sandbox with 100 MB changed vs `docker commit` +
//     `docker run -d` of a plain container with the same 100 MB changed.
// `engine_exec` is the same exec through the engine's API from this process (dockerode, no CLI
// start-up): the floor any client of the engine pays, so `sandbox_run - engine_exec` is what the
// gateway itself adds (JSON-RPC, pipeline, audit, finding the sandbox).
// Rounds are interleaved; medians are quoted with their ratio. Goals (issue 24): run <= 1.3x,
// checkpoint + rewind <= 1.2x. BENCH_ROUNDS (default 5), BENCH_RUNS (runs per round, default 20),
// BENCH_CHANGED_MB (default 100).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildContextImage, buildNodeBaseImage } from '@ringfence/gateway/images';
import { createDockerClient } from '@ringfence/gateway/runtime';
import { median } from './lib.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const CHANGED_MB = Number(process.env.BENCH_CHANGED_MB ?? 100);
const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
const TRIVIAL = ['node', '-e', '0'];
const WRITE = [
  'node',
  '-e',
  `require('fs').writeFileSync('/work/changed.bin', require('crypto').randomBytes(${CHANGED_MB} * 1024 * 1024))`,
];

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const docker = createDockerClient();
const base = await buildNodeBaseImage(docker);
// A workspace: /work writable by the sandbox user, so the changed bytes land in the container's layer.
const image = (
  await buildContextImage(docker, {
    repository: 'ringfence-bench/workspace',
    context: {
      dockerfile: `FROM ${base.ref}\nCOPY --chown=65532:65532 work /work\nWORKDIR /work\n`,
      files: [
        { path: 'work', mode: 0o755, source: { directory: true } },
        { path: 'work/.keep', mode: 0o644, source: { content: Buffer.from('') } },
      ],
    },
  })
).ref;

const home = await mkdtemp(join(tmpdir(), 'rf-bench-sandbox-'));
const session = `bench-sbx-${process.pid}`;
const client = new Client({ name: 'bench', version: '1' });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', 'serve', '--session', session, '--sandbox-tools', '--sandbox-image', image],
    env: { ...process.env, RINGFENCE_HOME: home },
    stderr: 'ignore',
  }),
);
async function tool(name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  const text = result.content?.[0]?.text ?? '';
  if (result.isError) throw new Error(`${name}: ${text}`);
  return JSON.parse(text);
}

await tool('sandbox_create', { name: 'bench', image, command: KEEP_ALIVE });
const sandboxContainer = `ringfence-sandbox-${session}-bench`;
// The baseline's own container: the same image and user, no network.
const plain = `rf-bench-plain-${process.pid}`;
await run('docker', [
  'run',
  '-d',
  '--name',
  plain,
  '--network',
  'none',
  '--user',
  '65532:65532',
  image,
  ...KEEP_ALIVE,
]);

const times = { sandbox_run: [], docker_exec: [], engine_exec: [], checkpoint_rewind: [], commit_run: [] };
/** exec create, start, read to the end, inspect: what `docker exec` asks of the engine. */
async function engineExec(name) {
  const exec = await docker.getContainer(name).exec({ Cmd: TRIVIAL, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  stream.resume();
  await new Promise((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
  return (await exec.inspect()).ExitCode;
}
try {
  for (let round = 0; round < ROUNDS; round++) {
    // 1. One trivial command, alternating between the two paths.
    for (let i = 0; i < RUNS; i++) {
      let start = process.hrtime.bigint();
      await tool('sandbox_run', { name: 'bench', command: TRIVIAL });
      times.sandbox_run.push(ms(start));
      start = process.hrtime.bigint();
      await run('docker', ['exec', sandboxContainer, ...TRIVIAL]);
      times.docker_exec.push(ms(start));
      start = process.hrtime.bigint();
      await engineExec(sandboxContainer);
      times.engine_exec.push(ms(start));
    }
    // 2. 100 MB changed (not timed), then saved and put back.
    await tool('sandbox_run', { name: 'bench', command: WRITE, timeout_seconds: 120 });
    let start = process.hrtime.bigint();
    const { checkpointed } = await tool('sandbox_checkpoint', { name: 'bench' });
    await tool('sandbox_rewind', { name: 'bench', checkpoint: checkpointed.checkpoint });
    times.checkpoint_rewind.push(ms(start));

    const current = round === 0 ? plain : `${plain}-${round}`;
    await run('docker', ['exec', current, ...WRITE]);
    const tag = `ringfence-bench/plain-commit:${process.pid}-${round}`;
    const next = `${plain}-${round + 1}`;
    start = process.hrtime.bigint();
    await run('docker', ['commit', current, tag]);
    await run('docker', [
      'run',
      '-d',
      '--name',
      next,
      '--network',
      'none',
      '--user',
      '65532:65532',
      tag,
      ...KEEP_ALIVE,
    ]);
    times.commit_run.push(ms(start));
    await run('docker', ['rm', '-f', current]);
  }
} finally {
  await tool('sandbox_delete', { name: 'bench' }).catch(() => {});
  await client.close();
  const left = await run('docker', ['ps', '-aq', '--filter', `name=${plain}`]);
  for (const id of left.stdout.split('\n').filter(Boolean))
    await run('docker', ['rm', '-f', id]).catch(() => {});
  for (let round = 0; round < ROUNDS; round++)
    await run('docker', ['rmi', `ringfence-bench/plain-commit:${process.pid}-${round}`]).catch(() => {});
  await rm(home, { recursive: true, force: true });
}

const p50 = (xs) => Number(median(xs).toFixed(1));
const summary = {
  bench: 'sandbox',
  via: 'mcp serve --sandbox-tools, SDK client over stdio',
  rounds: ROUNDS,
  runs_per_round: RUNS,
  changed_mb: CHANGED_MB,
  median_ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, p50(v)])),
  ratios: {
    sandbox_run_vs_docker_exec: Number((median(times.sandbox_run) / median(times.docker_exec)).toFixed(2)),
    sandbox_run_added_ms: Number((median(times.sandbox_run) - median(times.docker_exec)).toFixed(1)),
    sandbox_run_vs_engine_exec: Number((median(times.sandbox_run) / median(times.engine_exec)).toFixed(2)),
    gateway_added_ms: Number((median(times.sandbox_run) - median(times.engine_exec)).toFixed(1)),
    checkpoint_rewind_vs_commit_run: Number(
      (median(times.checkpoint_rewind) / median(times.commit_run)).toFixed(2),
    ),
  },
  goals: { sandbox_run_vs_docker_exec: 1.3, checkpoint_rewind_vs_commit_run: 1.2 },
};
console.log(JSON.stringify(summary, null, 2));
