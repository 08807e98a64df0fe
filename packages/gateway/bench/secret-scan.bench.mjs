#!/usr/bin/env node
// The credential scan's cost (issue 27): the egress scan of a typical small call's arguments and
// of a 1 MiB argument, and the ingress redaction of a 1 MiB result text, with 10 stored
// credentials (each looked for with its 13 derivations). Prints µs per call and MB/s, medians of
// BENCH_ROUNDS rounds. BENCH_BASELINE is not offered: main before issue 27 scans nothing.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const { SecretScanner } = await import(join(repo, 'packages/gateway/dist/credentials/scan/scanner.js'));

const credentials = Array.from({ length: 10 }, (_, i) => ({
  id: `c${i}`,
  class: 'generic',
  value: `Zq8vN2pL5xR7tW4k${i}Hj3kL9mN2bV6cX1z`,
  boundTo: ['other'],
}));
const scanner = new SecretScanner({ all: async () => credentials });
const reach = { kind: 'hosts', hosts: ['api.example.com'] };

const small = {
  path: '/home/me/project/src/index.ts',
  content: 'export const answer = 42;\n'.repeat(8),
  options: { recursive: true, depth: 3, exclude: ['node_modules', 'dist'] },
};
// Prose and code, as a large argument is: what the scan reads at its usual pace.
const line = 'const value = compute(input, { retries: 3, timeoutMs: 2500 }); // see docs/x.md\n';
const big = { content: line.repeat(Math.ceil((1 << 20) / line.length)).slice(0, 1 << 20) };
const bigResult = { content: [{ type: 'text', text: big.content }] };
const MB = (1 << 20) / 1e6;

async function time(fn, n) {
  for (let i = 0; i < Math.min(n, 20); i++) await fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - start) / 1e3 / n; // µs per call
}

const rows = { small: [], big: [], redact: [] };
for (let r = 0; r < ROUNDS; r++) {
  rows.small.push(await time(() => scanner.egress(small, 'files', reach), 2000));
  rows.big.push(await time(() => scanner.egress(big, 'files', reach), 10));
  rows.redact.push(await time(() => scanner.redact(bigResult), 10));
}
const small_us = median(rows.small);
const big_us = median(rows.big);
const redact_us = median(rows.redact);
console.log(
  JSON.stringify(
    {
      secret_scan: {
        small_call_us: Number(small_us.toFixed(1)),
        arg_1mib_us: Math.round(big_us),
        arg_1mib_mb_per_s: Number((MB / (big_us / 1e6)).toFixed(1)),
        result_1mib_redact_us: Math.round(redact_us),
        result_1mib_mb_per_s: Number((MB / (redact_us / 1e6)).toFixed(1)),
        rounds: ROUNDS,
      },
    },
    null,
    2,
  ),
);
