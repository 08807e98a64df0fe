// The sub-benches the goals bench runs, in order, each as a child process with its sizes (full:
// the whole run within ~15 minutes on 2 cores; quick, BENCH_QUICK=1: a smoke run of a few minutes),
// what it needs, and which input of goalRows (rows.mjs) its output feeds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStartup } from './rows.mjs';

/**
 * Each step: { name, input, cwd, args, env, needs: [prerequisite…], parse(stdout) }. `dirs`: the
 * disk directory that holds the contained benches' RINGFENCE_HOMEs (TMPDIR for them, so the
 * fdatasync is measured on that same disk) and a tmpfs directory for the floor rows.
 */
export function plan({ repo, quick, dirs, prereqs }) {
  const size = (full, small) => String(quick ? small : full);
  const gateway = join(repo, 'packages/gateway');
  const callCpuSource = readFileSync(join(gateway, 'bench/call-cpu.bench.mjs'), 'utf8');
  const containers = (tmpdir, extra = {}) => ({
    TMPDIR: tmpdir,
    BENCH_ROUNDS: size(3, 1),
    BENCH_CALLS: size(200, 100),
    BENCH_CONCURRENT: size(400, 200),
    // Steady state, as call-cpu measures it: both variants get the same warm-up calls.
    BENCH_WARM: size(2000, 500),
    ...extra,
  });
  const callCpu = (extra = {}) => ({
    TMPDIR: dirs.disk,
    BENCH_WARM: size(3000, 1000),
    BENCH_CALLS: size(3000, 1000),
    ...extra,
  });
  const fdatasync = (name) => ({
    name,
    input: 'fdatasync',
    cwd: repo,
    args: [join(repo, 'scripts/bench-goals/fdatasync.mjs'), dirs.disk, size(1000, 300)],
    env: {},
    needs: [],
    parse: JSON.parse,
  });
  const relays = ['direct', 'ringfence_stdio', ...(prereqs.supergateway.ok ? ['supergateway_stdio'] : [])];
  return [
    fdatasync('fdatasync (before)'),
    {
      name: 'containers',
      input: 'containers',
      cwd: gateway,
      args: ['bench/containers.bench.mjs'],
      env: containers(dirs.disk),
      needs: ['docker'],
      parse: jsonOut,
    },
    fdatasync('fdatasync (after)'),
    {
      name: 'call-cpu',
      input: 'callCpu',
      cwd: gateway,
      args: ['bench/call-cpu.bench.mjs'],
      env: callCpu(),
      needs: ['docker'],
      parse: jsonOut,
    },
    {
      name: 'call-cpu (remote)',
      input: 'callCpuRemote',
      cwd: gateway,
      args: ['bench/call-cpu.bench.mjs'],
      env: callCpu({ BENCH_UPSTREAM: 'remote' }),
      needs: [],
      unavailable: callCpuSource.includes('BENCH_UPSTREAM')
        ? undefined
        : 'call-cpu.bench.mjs has no BENCH_UPSTREAM=remote',
      parse: jsonOut,
    },
    {
      name: 'call-cpu (audit on tmpfs)',
      input: 'callCpuTmpfs',
      cwd: gateway,
      args: ['bench/call-cpu.bench.mjs'],
      env: callCpu({ BENCH_AUDIT_TMPFS: '1' }),
      needs: ['docker', 'shm'],
      parse: jsonOut,
    },
    {
      name: 'call-cpu (bare attach relay)',
      input: 'callCpuBare',
      cwd: gateway,
      args: ['bench/call-cpu.bench.mjs'],
      env: callCpu({ BENCH_VARIANT: 'bare-attach' }),
      needs: ['docker'],
      // Another slice adds this variant; until call-cpu.bench knows it, the row says so.
      unavailable: callCpuSource.includes('bare-attach')
        ? undefined
        : 'call-cpu.bench.mjs has no BENCH_VARIANT=bare-attach yet',
      parse: jsonOut,
    },
    {
      name: 'containers (audit on tmpfs)',
      input: 'containersTmpfs',
      cwd: gateway,
      args: ['bench/containers.bench.mjs'],
      env: containers(dirs.shm, { BENCH_READY: '0' }),
      needs: ['docker', 'shm'],
      parse: jsonOut,
    },
    {
      name: 'calls (remote)',
      input: 'calls',
      cwd: gateway,
      args: ['bench/calls.bench.mjs'],
      env: {
        BENCH_ONLY: relays.join(','),
        BENCH_ROUNDS: size(5, 2),
        BENCH_SEQUENTIAL: size(300, 150),
        BENCH_CONCURRENT: size(800, 300),
        BENCH_WARM: size(3000, 1000),
      },
      needs: [],
      parse: jsonOut,
    },
    {
      name: 'egress',
      input: 'egress',
      cwd: join(repo, 'packages/egress-proxy'),
      args: ['bench/run.mjs'],
      // ONLY set: run.mjs then writes last-partial-run.json (ignored by git), never the committed
      // last-run.json the docs quote.
      env: { ONLY: 'bulk,setup', ROUNDS: size(5, 2), BULK_MIB: size(256, 64), SETUPS: size(500, 200) },
      needs: [],
      parse: (stdout, cwd) => egressOut(stdout, cwd),
    },
    {
      name: 'startup',
      input: 'startup',
      cwd: join(repo, 'packages/cli'),
      args: ['bench/startup.bench.mjs'],
      env: { BENCH_CONTAINERS: '0', BENCH_COMMAND_LOADS: '0', ROUNDS: size(7, 3) },
      needs: [],
      parse: (stdout) => {
        const figures = parseStartup(stdout);
        if (figures.version_ms === undefined) throw new Error('no `ringfence --version` line in its output');
        return figures;
      },
    },
    {
      name: 'audit verify',
      input: 'auditVerify',
      cwd: gateway,
      args: ['bench/audit-verify.bench.mjs'],
      env: { ENTRIES: size(1_000_000, 200_000), ROUNDS: size(3, 2) },
      needs: [],
      parse: jsonOut,
    },
  ];
}

/** A bench's JSON summary: the whole stdout, or from the last line that opens an object. */
export function jsonOut(stdout) {
  try {
    return JSON.parse(stdout);
  } catch {
    const lines = stdout.split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      if (lines[i] !== '{') continue;
      try {
        return JSON.parse(lines.slice(i).join('\n'));
      } catch {}
    }
    throw new Error('no JSON object on its stdout');
  }
}

/** egress run.mjs prints text and ends with `wrote <file>`: its figures are in that file. */
function egressOut(stdout, cwd) {
  const wrote = /^wrote (.+\.json)\s*$/m.exec(stdout);
  if (!wrote) throw new Error('egress bench did not say which file it wrote');
  const path = wrote[1].startsWith('/') ? wrote[1] : join(cwd, wrote[1]);
  return JSON.parse(readFileSync(path, 'utf8'));
}
