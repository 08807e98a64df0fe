#!/usr/bin/env node
// CPU of the audit writer per call: one decision entry (awaited, as the pipeline does before it
// forwards) and one deferred result entry, from 8 callers at once, on tmpfs so the fdatasync costs
// nothing and what is left is preparing, serialising, hashing and the writer's own syscalls.
// BENCH_BASELINE=<built checkout> runs the same against that build, interleaved, in one run.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const builds = {
  current: repo,
  ...(process.env.BENCH_BASELINE ? { baseline: process.env.BENCH_BASELINE } : {}),
};

const args = { text: 'benchmark payload 0123456789' };
const result = { content: [{ type: 'text', text: 'benchmark payload 0123456789' }] };

async function round(root, dir) {
  const { AuditLog } = await import(join(root, 'packages/gateway/dist/audit/index.js'));
  const log = await AuditLog.open({ session: 'bench', path: join(dir, `${Math.random()}.jsonl`) });
  const call = async () => {
    const seq = await log.append({
      type: 'mcp.decision',
      refs: { phase: 'call', server: 'up', tool: 'echo', allowed: true, rule: 'default', arguments: args },
    });
    await log.append(
      { type: 'mcp.result', parentSeq: seq, refs: { server: 'up', tool: 'echo', is_error: false, result } },
      { defer: true },
    );
  };
  for (let i = 0; i < 200; i++) await call();
  const start = process.cpuUsage();
  let issued = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (issued < CALLS) {
        issued += 1;
        await call();
      }
    }),
  );
  const used = process.cpuUsage(start);
  await log.close();
  return (used.user + used.system) / CALLS;
}

const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'rf-audit-append-'));
try {
  const samples = Object.fromEntries(Object.keys(builds).map((name) => [name, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, root] of Object.entries(builds)) samples[name].push(await round(root, dir));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const summary = Object.fromEntries(
    Object.entries(samples).map(([name, xs]) => [name, { cpu_us_per_call: Number(median(xs).toFixed(1)) }]),
  );
  const ratio = summary.baseline
    ? {
        current_vs_baseline: Number(
          (summary.current.cpu_us_per_call / summary.baseline.cpu_us_per_call).toFixed(3),
        ),
      }
    : {};
  console.log(
    JSON.stringify(
      { summary, ...ratio, settings: { rounds: ROUNDS, calls: CALLS, node: process.version } },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
