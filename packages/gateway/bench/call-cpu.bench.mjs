#!/usr/bin/env node
// Where a contained call's CPU goes inside `mcp serve`: the probe image as a registered container
// server, one SDK client, BENCH_WARM calls first (default 3,000: V8 keeps compiling hot functions
// on its background threads for the first few thousand calls, which is start-up cost, not the
// call's), then BENCH_CALLS calls sequentially and BENCH_CALLS from 8 callers. CPU per call from
// /proc, per thread: the gateway's main thread, V8's and libuv's helper threads (the audit's
// fdatasync runs in libuv's pool). BENCH_NODE_ARGS adds node flags for `mcp serve` (profiling);
// BENCH_AUDIT_TMPFS=1 puts RINGFENCE_HOME on /dev/shm (the fdatasync then costs nothing).
// BENCH_UPSTREAM=remote measures the remote path instead: the streamable-HTTP `echo` server of
// test/fixtures/tool-server.mjs on loopback, registered with `mcp add --url`.
// BENCH_VARIANT=bare-attach measures the floor instead of `mcp serve`: bare-attach-relay.mjs, the
// same probe container behind the gateway's attach stream and nothing else (no MCP, no pipeline).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createDockerClient } from '@ringfence/gateway/runtime';
import { buildProbeImage, startEchoUpstream } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const WARM = Number(process.env.BENCH_WARM ?? 3000);
const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const VARIANT = process.env.BENCH_VARIANT ?? 'gateway';
if (VARIANT !== 'gateway' && VARIANT !== 'bare-attach') throw new Error(`unknown BENCH_VARIANT ${VARIANT}`);
const NODE_ARGS = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
const TICK_US = 1e6 / Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim());

/** Each thread's [user, system] microseconds so far. */
function threads(pid) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[tid] = [Number(f[11]) * TICK_US, Number(f[12]) * TICK_US];
    } catch {}
  }
  return out;
}

const REMOTE = process.env.BENCH_UPSTREAM === 'remote';
const home = await mkdtemp(
  join(process.env.BENCH_AUDIT_TMPFS === '1' ? '/dev/shm' : tmpdir(), 'rf-call-cpu-'),
);
const env = { ...process.env, RINGFENCE_HOME: home };

const remote = REMOTE ? await startEchoUpstream(home, 'ignore') : undefined;
const probe = REMOTE ? undefined : await buildProbeImage(createDockerClient());
if (VARIANT === 'gateway') {
  const target = REMOTE ? ['--url', remote.url] : ['--image', probe.ref];
  const added = spawnSync(process.execPath, [cli, 'mcp', 'add', 's0', ...target], { env });
  if (added.status !== 0) throw new Error(added.stderr.toString());
} else if (REMOTE) throw new Error('BENCH_VARIANT=bare-attach measures the contained path only');
const relay = fileURLToPath(new URL('./bare-attach-relay.mjs', import.meta.url));
const client = new Client({ name: 'bench-call-cpu', version: '1' });
const transport = new StdioClientTransport({
  command: process.execPath,
  args: VARIANT === 'gateway' ? [...NODE_ARGS, cli, 'mcp', 'serve'] : [...NODE_ARGS, relay, probe.ref],
  env,
  stderr: 'ignore',
});
await client.connect(transport);
const pid = transport.pid;
const call = REMOTE
  ? () => client.callTool({ name: 's0_echo', arguments: { text: 'benchmark payload 0123456789' } })
  : () => client.callTool({ name: VARIANT === 'gateway' ? 's0_probe' : 'probe', arguments: {} });
for (let i = 0; i < WARM; i++) await call();

async function measure(callers) {
  const before = threads(pid);
  const start = process.hrtime.bigint();
  let issued = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (issued < CALLS) {
        issued += 1;
        await call();
      }
    }),
  );
  const wallUs = Number(process.hrtime.bigint() - start) / 1e3;
  const after = threads(pid);
  const per = (x) => Math.round(x / CALLS);
  const main = [after[pid][0] - before[pid][0], after[pid][1] - before[pid][1]];
  let others = 0;
  for (const tid of Object.keys(after)) {
    if (Number(tid) === pid) continue;
    const b = before[tid] ?? [0, 0];
    others += after[tid][0] - b[0] + after[tid][1] - b[1];
  }
  return {
    callers,
    wall_us_per_call: per(wallUs),
    cpu_us_per_call: per(main[0] + main[1] + others),
    main_thread_user_us: per(main[0]),
    main_thread_system_us: per(main[1]),
    other_threads_us: per(others),
  };
}

const result = { sequential: await measure(1), eight_callers: await measure(8) };
await client.close();
remote?.child.kill();
await rm(home, { recursive: true, force: true });
console.log(
  JSON.stringify(
    {
      ...result,
      settings: {
        upstream: REMOTE ? 'remote' : 'contained',
        variant: VARIANT,
        warm: WARM,
        calls: CALLS,
        node_args: NODE_ARGS,
        audit_tmpfs: process.env.BENCH_AUDIT_TMPFS === '1',
        node: process.version,
      },
    },
    null,
    2,
  ),
);
