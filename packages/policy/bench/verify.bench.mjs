// npm run bench (after npm run build): median time to verify a signed policy with 1,000 servers
// and 100 / 1,000 / 10,000 pins, end to end (envelope, signature, strict parse, canonical check,
// schema, expiry), plus the evaluation lookups the gateway makes per server. No network.
import { performance } from 'node:perf_hooks';
import {
  buildRoot,
  generateKeyPair,
  orgPins,
  signPolicy,
  signRoot,
  verifyPolicy,
  verifyRootChain,
} from '../dist/index.js';

const SERVERS = 1000;
const RUNS = Number(process.env.BENCH_RUNS ?? 31);
const now = Date.now();
const rootKey = generateKeyPair();
const policyKey = generateKeyPair();
const root = verifyRootChain(
  [
    JSON.stringify(
      signRoot(
        buildRoot({
          version: 1,
          expires: new Date(now + 365 * 86_400_000).toISOString(),
          rootKeys: [rootKey.publicKey],
          rootThreshold: 1,
          policyKeys: [policyKey.publicKey],
          policyThreshold: 1,
        }),
        [rootKey],
      ),
    ),
  ],
  { now },
);
if (!root.ok) throw new Error(root.message);

function policyWith(pins) {
  const mcp = [];
  for (let s = 0; s < SERVERS; s++) {
    const count = Math.floor(pins / SERVERS) + (s < pins % SERVERS ? 1 : 0);
    const entry = { server: `server-${s}`, allow_tools: [], egress_allow: [`api${s}.example.com`] };
    if (count > 0) {
      entry.pins = Array.from({ length: count }, (_, t) => {
        entry.allow_tools.push(`tool_${t}`);
        return { tool: `tool_${t}`, digest: `sha256:${(s * 7919 + t).toString(16).padStart(64, '0')}` };
      });
    }
    mcp.push(entry);
  }
  return {
    _type: 'ringfence/policy',
    spec_version: 1,
    name: 'bench',
    version: 1,
    issued_at: new Date(now - 86_400_000).toISOString(),
    expires: new Date(now + 30 * 86_400_000).toISOString(),
    default_action: 'allow',
    mcp,
    rules: [{ id: 'r', match: { server: 'server-1' }, when: [{ arg: '/a', glob: 'x*' }], action: 'ask' }],
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const rows = [];
for (const pins of [100, 1000, 10000]) {
  const text = JSON.stringify(signPolicy(policyWith(pins), [policyKey]));
  for (let i = 0; i < 5; i++) verifyPolicy(text, { root: root.root, now }); // warm up: schema compile, JIT
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const result = verifyPolicy(text, { root: root.root, now });
    times.push(performance.now() - start);
    if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  }
  const verified = verifyPolicy(text, { root: root.root, now });
  const lookupStart = performance.now();
  for (let s = 0; s < SERVERS; s++) orgPins(verified.policy, `server-${s}`);
  const lookups = performance.now() - lookupStart;
  rows.push({ pins, bytes: text.length, median: median(times), min: Math.min(...times), lookups });
}

console.log(`verifyPolicy, ${SERVERS} servers, median of ${RUNS} runs (node ${process.version})`);
console.log('pins     envelope   median verify   fastest run   orgPins x1000 servers');
for (const r of rows) {
  console.log(
    `${String(r.pins).padEnd(8)} ${`${(r.bytes / 1024).toFixed(0)} KiB`.padEnd(10)} ${`${r.median.toFixed(1)} ms`.padEnd(15)} ${`${r.min.toFixed(1)} ms`.padEnd(13)} ${r.lookups.toFixed(1)} ms`,
  );
}
const first = rows[0];
const last = rows.at(-1);
console.log(
  `growth 100 → 10,000 pins: ×${(last.median / first.median).toFixed(1)} time for ×${(last.bytes / first.bytes).toFixed(1)} bytes`,
);
