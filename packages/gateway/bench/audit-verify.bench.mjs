#!/usr/bin/env node
// `audit verify` throughput and memory on a large log: ENTRIES (default 1,000,000) chained
// entries, alternately a call decision and its result as the gateway writes them, each verified
// ROUNDS times in a fresh process (so peak RSS is the verifier's own). Medians are quoted.
//   node bench/audit-verify.bench.mjs            ENTRIES=200000 ROUNDS=3 node bench/audit-verify.bench.mjs
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIT_GENESIS, hashLine, serializeEntry } from '@ringfence/gateway/audit';

const ENTRIES = Number(process.env.ENTRIES ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Run as the child: verify once, report time and peak RSS on stdout.
if (process.argv[2] === '--verify') {
  const { verifyAuditLog } = await import('@ringfence/gateway/audit');
  const started = process.hrtime.bigint();
  const result = await verifyAuditLog(process.argv[3]);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  const { readFileSync } = await import('node:fs');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  process.stdout.write(JSON.stringify({ ms, entries: result.entries, peakRssKiB: hwm }));
  process.exit(0);
}

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

  const runs = [];
  execFileSync(process.execPath, [import.meta.filename, '--verify', path]); // page cache, like a re-run
  for (let round = 0; round < ROUNDS; round++) {
    runs.push(
      JSON.parse(
        execFileSync(process.execPath, [import.meta.filename, '--verify', path], { encoding: 'utf8' }),
      ),
    );
    process.stderr.write(`round ${round + 1}/${ROUNDS}: ${runs.at(-1).ms.toFixed(0)} ms\n`);
  }
  const ms = median(runs.map((r) => r.ms));
  const summary = {
    entries: ENTRIES,
    mib: Number((bytes / 1024 / 1024).toFixed(1)),
    median_ms: Math.round(ms),
    mb_per_s: Number((bytes / 1e6 / (ms / 1000)).toFixed(1)),
    peak_rss_mib: Number((median(runs.map((r) => r.peakRssKiB)) / 1024).toFixed(1)),
    settings: { rounds: ROUNDS, node: process.version },
  };
  console.log(JSON.stringify(summary, null, 2));
} finally {
  await rm(dir, { recursive: true, force: true });
}
