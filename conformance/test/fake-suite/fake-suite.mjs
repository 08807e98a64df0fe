// Stands in for the conformance suite's CLI (`server --url URL -o DIR`) in the runner's tests: it
// initialises a session at URL (so the runner must hand it a URL that works, through the proxy
// and gateway too), then reports what plan.json beside it says, in the suite's own formats.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

const plan = JSON.parse(readFileSync(new URL('plan.json', import.meta.url), 'utf8'));
const args = process.argv.slice(2);
const url = args[args.indexOf('--url') + 1];
const out = args[args.indexOf('-o') + 1];

const answer = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'fake-suite', version: '1' },
    },
  }),
});
if (answer.status !== 200 || !answer.headers.get('mcp-session-id')) {
  console.error(`fake suite: initialize at ${url} answered ${answer.status}: ${await answer.text()}`);
  process.exit(1);
}
if (plan.phoneHome) {
  // 0.0.0.0 stays on this machine even if the guard let it through.
  await new Promise((resolve) => net.connect(9, '0.0.0.0').on('error', resolve).on('connect', resolve));
}
let passed = 0;
let failed = 0;
for (const [scenario, checks] of Object.entries(plan.scenarios)) {
  console.log(`\n=== Running scenario: ${scenario} ===`);
  if (checks === 'crash') {
    console.error(`Failed to run scenario ${scenario}: Error: fake crash`);
    failed++;
    continue;
  }
  const dir = join(out, `server-${scenario}-2026-11-30T13-42-46-826Z`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'checks.json'), JSON.stringify(checks));
  passed += checks.filter((c) => c.status === 'SUCCESS').length;
  failed += checks.filter((c) => c.status === 'FAILURE').length;
}
if (!plan.noTotals) console.log(`\nTotal: ${passed} passed, ${failed} failed`);
