#!/usr/bin/env node
// `npm run bench`: issue 26's goals in one run. Every sub-bench (packages/*/bench) runs as a
// child process, one after the other (2 shared cores: never two at once), with sizes that keep the
// whole run within ~15 minutes; then one table, one row per goal: figure, ringfence, anchor,
// ratio or limit, goal, met / NOT met (n/a with the reason when a figure is missing). The same
// rows and every sub-bench's raw JSON go to bench-results/goals.json.
//   npm run bench                        full run
//   BENCH_QUICK=1 npm run bench          smoke run (~3 minutes on a quiet machine; rougher figures)
//   BENCH_GOALS_ONLY=containers,egress   only the named steps (names as printed, prefix match)
//   BENCH_GOALS_OUT=path.json            where the JSON goes
//   node scripts/bench-goals.mjs --from bench-results/goals.json   the table again, no measuring
// Exit code: 0 when every sub-bench ran (goals not met are reported, not failed); 1 when one
// failed; a missing prerequisite skips its rows and says how to get it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { plan } from './bench-goals/plan.mjs';
import { checkPrerequisites, describeMissing } from './bench-goals/prereqs.mjs';
import { formatTable, goalRows } from './bench-goals/rows.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.env.BENCH_QUICK === '1';
const only = process.env.BENCH_GOALS_ONLY?.split(',').map((s) => s.trim());
const out = resolve(process.env.BENCH_GOALS_OUT ?? join(repo, 'bench-results/goals.json'));
const STEP_TIMEOUT_MS = Number(process.env.BENCH_GOALS_STEP_TIMEOUT_S ?? 1200) * 1000;
const say = (s) => process.stderr.write(`${s}\n`);

/** The child's environment: ours without any BENCH_* size a caller left set, plus the step's own. */
function childEnv(extra) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(BENCH_|ROUNDS$|ENTRIES$|ONLY$|BULK_MIB$|SETUPS$|SMALL_|CONNECT)/.test(k),
    ),
  );
  return { ...env, TURBO_TELEMETRY_DISABLED: '1', ...extra };
}

/** The step running now, so Ctrl-C can stop its process group. */
let current;
function stopGroup(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {}
}

/** Runs one step; resolves { stdout } or rejects with what went wrong (its stderr's tail). */
function runStep(step) {
  return new Promise((resolveStep, reject) => {
    const child = spawn(process.execPath, step.args, {
      cwd: step.cwd,
      env: childEnv(step.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a timeout or Ctrl-C stops the bench and what it started (servers,
      // `mcp serve`, `docker run` clients), not only the bench's own process.
      detached: true,
    });
    current = child;
    let stdout = '';
    let tail = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      tail = (tail + d).slice(-2000);
      for (const line of String(d).split('\n')) if (line.trim()) say(`  [${step.name}] ${line}`);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stopGroup(child);
    }, STEP_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      if (code === 0) return resolveStep({ stdout });
      const last = tail.trim().split('\n').slice(-3).join(' / ');
      const how = timedOut
        ? `stopped after ${STEP_TIMEOUT_MS / 1000} s (BENCH_GOALS_STEP_TIMEOUT_S)`
        : `exit ${code ?? signal}`;
      reject(new Error(`${how}${last ? `: ${last}` : ''}`));
    });
  });
}

// `--from FILE`: the table again from a run's JSON (its sub-benches' figures), without measuring.
if (process.argv[2] === '--from') {
  const saved = JSON.parse(readFileSync(resolve(process.argv[3] ?? out), 'utf8'));
  if (!saved.inputs) throw new Error(`${process.argv[3]}: no inputs (written by an older harness)`);
  console.log(`issue 26 goals, from ${saved.date} (${saved.quick ? 'quick' : 'full'}, ${saved.seconds} s)\n`);
  console.log(formatTable(goalRows(saved.inputs)));
  process.exit(0);
}

const prereqs = checkPrerequisites(repo);
const missing = describeMissing(prereqs);
for (const line of missing) say(line);
if (!prereqs.built.ok) {
  say('The goals bench measures the built packages: build first, then run it again.');
  process.exit(1);
}

// The contained benches' RINGFENCE_HOMEs live under dirs.disk (their TMPDIR), and the fdatasync
// step syncs there: the audit's sync and its anchor on the same disk.
const dirs = {
  disk: mkdtempSync(join(tmpdir(), 'rf-bench-goals-')),
  ...(prereqs.shm.ok ? { shm: mkdtempSync('/dev/shm/rf-bench-goals-') } : {}),
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    if (current) stopGroup(current);
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}
const steps = plan({ repo, quick, dirs, prereqs }).filter(
  (s) => !only || only.some((o) => s.name.startsWith(o)),
);
const inputs = {};
const raw = {};
const failures = [];
const started = Date.now();
// Wall-clock rows (p50s, ready, calls/s, --version) move with the machine's load: it is reported.
const load = [loadavg()[0]];
say(`goals bench: ${steps.length} steps${quick ? ' (quick)' : ''}; disk for the audit: ${dirs.disk}`);
try {
  for (const step of steps) {
    const lacking = step.needs.filter((n) => !prereqs[n].ok);
    const skip = lacking.length ? `needs ${lacking.join(', ')}` : step.unavailable;
    if (skip) {
      say(`- ${step.name}: skipped (${skip})`);
      inputs[step.input] ??= { skipped: skip };
      raw[step.name] = { skipped: skip };
      continue;
    }
    const t0 = Date.now();
    say(`- ${step.name} …`);
    try {
      const { stdout } = await runStep(step);
      const parsed = step.parse(stdout, step.cwd);
      raw[step.name] = parsed;
      // Two fdatasync runs (before and after the containers bench): their p50s' mean is the anchor's.
      if (step.input === 'fdatasync' && inputs.fdatasync && !inputs.fdatasync.skipped) {
        const runs = [...(inputs.fdatasync.runs ?? [inputs.fdatasync]), parsed];
        const mean = (k) => Number((runs.reduce((a, r) => a + r[k], 0) / runs.length).toFixed(3));
        inputs.fdatasync = { ...parsed, p50_ms: mean('p50_ms'), p99_ms: mean('p99_ms'), runs };
      } else inputs[step.input] = parsed;
      say(`  done in ${Math.round((Date.now() - t0) / 1000)} s`);
    } catch (err) {
      say(`  FAILED: ${err.message}`);
      failures.push({ step: step.name, error: err.message });
      inputs[step.input] = { failed: err.message.slice(0, 80) };
      raw[step.name] = { failed: err.message };
    }
  }
} finally {
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
}

load.push(loadavg()[0]);
const rows = goalRows(inputs);
const seconds = Math.round((Date.now() - started) / 1000);
const loadNote = `load average ${load.map((x) => x.toFixed(1)).join(' → ')} on ${availableParallelism()} cores`;
console.log(
  `\nissue 26 goals, one run (${quick ? 'quick' : 'full'}, ${seconds} s, node ${process.version}, ${loadNote})\n`,
);
console.log(formatTable(rows));
const met = rows.filter((r) => r.verdict === 'met').length;
const notMet = rows.filter((r) => r.verdict === 'NOT met').length;
console.log(`\n${met} met, ${notMet} not met, ${rows.filter((r) => r.verdict === 'n/a').length} n/a`);
for (const line of missing) console.log(line);
for (const f of failures) console.log(`sub-bench failed: ${f.step}: ${f.error}`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      quick,
      seconds,
      load_average_1m: load,
      node: process.version,
      prerequisites: prereqs,
      failures,
      rows,
      inputs,
      sub_benches: raw,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
process.exit(failures.length ? 1 : 0);
