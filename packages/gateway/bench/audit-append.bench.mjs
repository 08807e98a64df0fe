#!/usr/bin/env node
// CPU of the audit writer per call: one decision entry (awaited, as the pipeline does before it
// forwards) and one deferred result entry (not awaited, as in the pipeline), from 8 callers at
// once, on tmpfs so the fdatasync costs nothing and what is left is preparing, serialising,
// hashing and the writer's own syscalls.
// BENCH_BASELINE=<built checkout> runs the same against that build, interleaved, in one run.
// `fdatasync_p50_ms`: what the durability of one decision costs in time on the disk an audit log
// would live on (one line written and fdatasync'd, as the writer does, in BENCH_DIR or the
// system's temporary directory: the disk of a bench's RINGFENCE_HOME). BENCH_DIR also moves the
// writer's rounds off tmpfs.
import { existsSync, writeSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const AWAIT_RESULT = process.env.BENCH_AWAIT_RESULT === '1';
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
    const written = log.append(
      { type: 'mcp.result', parentSeq: seq, refs: { server: 'up', tool: 'echo', is_error: false, result } },
      { defer: true },
    );
    // The pipeline does not wait for a result entry (serve/pipeline/run.ts); BENCH_AWAIT_RESULT=1
    // waits anyway (this bench's first form: a caller then stalls until DEFER_MS when every
    // caller waits on a result and no decision comes to take them along).
    if (AWAIT_RESULT) await written;
    else written.catch(() => {});
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

/** p50 of one ~300-byte line written and fdatasync'd (FileHandle.datasync, as the writer), in ms. */
async function fdatasyncP50(dir, samples = Number(process.env.BENCH_FSYNC_SAMPLES ?? 1000)) {
  const file = join(dir, 'fdatasync-probe.jsonl');
  const handle = await open(file, 'a', 0o600);
  const line = Buffer.from(`${JSON.stringify({ pad: 'x'.repeat(280) })}\n`);
  const times = [];
  try {
    for (let i = 0; i < samples + 50; i++) {
      const start = process.hrtime.bigint();
      writeSync(handle.fd, line, 0, line.length, null);
      await handle.datasync();
      if (i >= 50) times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  } finally {
    await handle.close();
    await rm(file, { force: true });
  }
  return Number(times.sort((a, b) => a - b)[Math.floor(times.length / 2)].toFixed(3));
}

const dir = await mkdtemp(
  join(process.env.BENCH_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'rf-audit-append-'),
);
const syncDir = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'rf-audit-fdatasync-'));
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
  const fdatasync_p50_ms = await fdatasyncP50(syncDir);
  console.log(
    JSON.stringify(
      {
        summary,
        ...ratio,
        fdatasync_p50_ms,
        settings: {
          rounds: ROUNDS,
          calls: CALLS,
          await_result: AWAIT_RESULT,
          dir,
          fdatasync_dir: syncDir,
          node: process.version,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await rm(syncDir, { recursive: true, force: true });
}
