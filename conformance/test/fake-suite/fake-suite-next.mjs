// Stands in for the newest suite's CLI (`server --url URL -o DIR --requirements REVISION`) in
// run-next.mjs's tests: it opens a 2025 session at URL (so the runner must hand it a URL that
// works), then reports what plan.json beside it says for that revision, in the suite's formats.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const plan = JSON.parse(readFileSync(new URL('plan.json', import.meta.url), 'utf8'));
const args = process.argv.slice(2);
const url = args[args.indexOf('--url') + 1];
const out = args[args.indexOf('-o') + 1];
const revision = args[args.indexOf('--requirements') + 1];

const answer = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'fake-suite-next', version: '1' },
    },
  }),
});
if (answer.status !== 200) {
  console.error(`fake suite: initialize at ${url} answered ${answer.status}: ${await answer.text()}`);
  process.exit(1);
}
let passed = 0;
let failed = 0;
for (const [scenario, checks] of Object.entries(plan[revision] ?? {})) {
  console.log(`\n=== Running scenario: ${scenario} ===`);
  const dir = join(out, `server-${scenario}-2026-12-01T13-42-46-826Z`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'checks.json'), JSON.stringify(checks));
  passed += checks.filter((c) => c.status === 'SUCCESS').length;
  failed += checks.filter((c) => c.status === 'FAILURE').length;
}
console.log(`\nTotal: ${passed} passed, ${failed} failed`);
