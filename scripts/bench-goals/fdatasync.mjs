#!/usr/bin/env node
// The audit's durability cost on a given disk: append a ~400-byte line (an audit entry's size)
// to a file in DIR and fdatasync it, COUNT times, one after the other as the gateway's appender
// does; prints { p50_ms, p99_ms, count, dir, fs } as JSON. The goals harness runs it in the
// directory that holds the containers bench's RINGFENCE_HOME, so the anchor "docker run -i p50 +
// fdatasync p50 + 0.3 ms" uses the sync the gateway itself waits for.
//   node scripts/bench-goals/fdatasync.mjs DIR [COUNT]
import { spawnSync } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const [dir, countArg] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: fdatasync.mjs DIR [COUNT]\n');
  process.exit(2);
}
const COUNT = Number(countArg ?? 500);
const work = mkdtempSync(join(dir, 'rf-fdatasync-'));
const path = join(work, 'audit.jsonl');
const line = Buffer.from(`${JSON.stringify({ type: 'mcp.decision', pad: 'x'.repeat(367) })}\n`);
const times = [];
const fd = openSync(path, 'a', 0o600);
try {
  // A few unrecorded appends: the file's first blocks and the journal's first commit.
  for (let i = 0; i < 10 + COUNT; i++) {
    const start = process.hrtime.bigint();
    writeSync(fd, line);
    fdatasyncSync(fd);
    if (i >= 10) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
} finally {
  closeSync(fd);
  rmSync(work, { recursive: true, force: true });
}
times.sort((a, b) => a - b);
const at = (p) => Number(times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))].toFixed(3));
const fs = spawnSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).stdout?.trim() || 'unknown';
console.log(
  JSON.stringify({ p50_ms: at(50), p99_ms: at(99), count: COUNT, line_bytes: line.length, dir, fs }),
);
