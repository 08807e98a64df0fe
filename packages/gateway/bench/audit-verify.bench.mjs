#!/usr/bin/env node
// `audit verify` throughput and memory on a large log: ENTRIES (default 1,000,000) chained
// entries, alternately a call decision and its result as the gateway writes them, each verified
// ROUNDS times in a fresh process (so peak RSS is the verifier's own). Medians are quoted.
//   node bench/audit-verify.bench.mjs            ENTRIES=200000 ROUNDS=3 node bench/audit-verify.bench.mjs
//   BENCH_BASELINE=/work/main node bench/audit-verify.bench.mjs   (that checkout's built verifier too,
//   alternating with this one round by round on the same file; CPU time from the child's rusage)
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIT_GENESIS, hashLine, serializeEntry } from '@ringfence/gateway/audit';
import { median } from './lib.mjs';

const ENTRIES = Number(process.env.ENTRIES ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

// Run as the child: verify once, report time and peak RSS on stdout.
if (process.argv[2] === '--verify') {
  const module = process.argv[4]
    ? (await import('node:url')).pathToFileURL(process.argv[4]).href
    : '@ringfence/gateway/audit';
  const { verifyAuditLog } = await import(module);
  const cpu0 = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = await verifyAuditLog(process.argv[3]);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  const { readFileSync } = await import('node:fs');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(JSON.stringify({ ms, cpuMs, entries: result.entries, peakRssKiB: hwm }));
  process.exit(0);
}

const BASELINE = process.env.BENCH_BASELINE
  ? join(process.env.BENCH_BASELINE, 'packages', 'gateway', 'dist', 'audit', 'index.js')
  : undefined;

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-verify-'));
const path = join(dir, 'audit.jsonl');
try {
  const out = createWriteStream(path);
  const digest = (i) => `sha256:${(i * 2654435761).toString(16).padStart(64, '0').slice(-64)}`;
  let prev = AUDIT_GENESIS;
  let pending = [];
  const t0 = Date.parse('2026-11-30T12:00:00.000Z');
  for (let seq = 1; seq <= ENTRIES; seq++) {
    const ts = new Date(t0 + seq).toISOString();
    const base = { seq, ts, session: 'bench-session', agent: 'claude-desktop', scope: 'default', prev };
    const entry =
      seq % 2 === 1
        ? {
            type: 'mcp.decision',
            ...base,
            refs: {
              phase: 'call',
              server: 'docs',
              tool: 'search',
              allowed: true,
              rule: 'default',
              arguments: digest(seq),
              digest: digest(seq + 7),
            },
          }
        : {
            type: 'mcp.result',
            ...base,
            parent_seq: seq - 1,
            refs: { server: 'docs', tool: 'search', is_error: false, result: digest(seq) },
          };
    const line = serializeEntry(entry);
    prev = hashLine(line);
    pending.push(line, '\n');
    if (pending.length >= 2000) {
      if (!out.write(pending.join(''))) await once(out, 'drain');
      pending = [];
    }
  }
  out.end(pending.join(''));
  await once(out, 'finish');
  const bytes = (await stat(path)).size;

  const variants = [
    { name: 'this', module: [] },
    ...(BASELINE ? [{ name: 'baseline', module: [BASELINE] }] : []),
  ];
  const runs = Object.fromEntries(variants.map((v) => [v.name, []]));
  const verify = (v) =>
    JSON.parse(
      execFileSync(process.execPath, [import.meta.filename, '--verify', path, ...v.module], {
        encoding: 'utf8',
      }),
    );
  for (const v of variants) verify(v); // page cache and code cache, like a re-run
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so neither variant always runs first after the other.
    for (const v of round % 2 ? [...variants].reverse() : variants) {
      runs[v.name].push(verify(v));
      const r = runs[v.name].at(-1);
      process.stderr.write(
        `round ${round + 1}/${ROUNDS} ${v.name}: ${r.ms.toFixed(0)} ms, ${r.cpuMs.toFixed(0)} ms CPU\n`,
      );
    }
  }
  const figures = (rs) => {
    const ms = median(rs.map((r) => r.ms));
    return {
      median_ms: Math.round(ms),
      mb_per_s: Number((bytes / 1e6 / (ms / 1000)).toFixed(1)),
      cpu_ms: Math.round(median(rs.map((r) => r.cpuMs))),
      mb_per_cpu_s: Number((bytes / 1e6 / (median(rs.map((r) => r.cpuMs)) / 1000)).toFixed(1)),
      peak_rss_mib: Number((median(rs.map((r) => r.peakRssKiB)) / 1024).toFixed(1)),
    };
  };
  const summary = {
    entries: ENTRIES,
    mib: Number((bytes / 1024 / 1024).toFixed(1)),
    ...figures(runs.this),
    ...(BASELINE ? { baseline: figures(runs.baseline) } : {}),
    settings: { rounds: ROUNDS, node: process.version },
  };
  console.log(JSON.stringify(summary, null, 2));
} finally {
  await rm(dir, { recursive: true, force: true });
}
