// Group commit under a crash: 32 calls in flight through `ringfence mcp serve` (the SDK's client
// over stdio, a real server on loopback), then kill -9. Every call that was answered has its
// result entry; only the calls in flight lack one, and `audit verify` names exactly those, by seq.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { connectStdio, freshHome, startToolServer } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

afterAll(stopAll);

interface Entry {
  seq: number;
  type: string;
  parent_seq?: number;
  refs: { phase?: string; tool?: string; allowed?: boolean };
}

const entries = async (home: string): Promise<Entry[]> =>
  (await readFile(join(home, 'audit.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);

it('after kill -9 with 32 calls in flight, only those lack a result, and audit verify reports them by seq', async () => {
  const dir = await mkdtemp(join(process.env.TMPDIR ?? '/tmp', 'rf-crash-'));
  const tools = join(dir, 'tools.json');
  const behaviours = join(dir, 'behaviours.json');
  const schema = { type: 'object', properties: { i: { type: 'number' } } };
  await writeFile(
    tools,
    JSON.stringify([
      { name: 'fast', description: 'Answers at once.', inputSchema: schema },
      { name: 'slow', description: 'Answers after a minute.', inputSchema: schema },
    ]),
  );
  await writeFile(
    behaviours,
    JSON.stringify({ fast: { echo: true }, slow: { delayMs: 60_000, echo: true } }),
  );
  const server = await startToolServer(tools, behaviours);
  const home = await freshHome();
  expect((await ringfence(['mcp', 'add', 'up', '--url', server.url], { RINGFENCE_HOME: home })).code).toBe(0);

  const served = await connectStdio(home);
  const pid = (served.client.transport as StdioClientTransport).pid!;
  // 32 answered calls, concurrently: their results are deferred (group-committed).
  await Promise.all(
    Array.from({ length: 32 }, (_, i) => served.client.callTool({ name: 'up_fast', arguments: { i } })),
  );
  // 32 more that will not be answered before the crash.
  const inFlight = Array.from({ length: 32 }, (_, i) =>
    served.client.callTool({ name: 'up_slow', arguments: { i } }).catch(() => 'cut off'),
  );
  const slowDecisions = async () =>
    (await entries(home)).filter((e) => e.type === 'mcp.decision' && e.refs.tool === 'slow');
  // Each decision is durable before its call is forwarded: wait until all 32 are on disk.
  for (let i = 0; i < 600 && (await slowDecisions()).length < 32; i++)
    await new Promise((r) => setTimeout(r, 50));
  process.kill(pid, 'SIGKILL');
  await Promise.all(inFlight);
  server.stop();

  const log = await entries(home);
  const decided = log.filter((e) => e.type === 'mcp.decision' && e.refs.phase === 'call');
  const answered = new Set(log.filter((e) => e.type === 'mcp.result').map((e) => e.parent_seq));
  const fast = decided.filter((e) => e.refs.tool === 'fast');
  const slow = decided.filter((e) => e.refs.tool === 'slow');
  expect(fast).toHaveLength(32);
  expect(slow).toHaveLength(32);
  expect(fast.filter((e) => !answered.has(e.seq))).toEqual([]);

  const verify = await ringfence(['audit', 'verify', '--json'], { RINGFENCE_HOME: home });
  expect(verify.code).toBe(0);
  const report = JSON.parse(verify.stdout) as { ok: boolean; interrupted: number[] };
  expect(report.ok).toBe(true);
  expect(report.interrupted).toEqual(slow.map((e) => e.seq));
  const text = await ringfence(['audit', 'verify'], { RINGFENCE_HOME: home });
  expect(text.stdout).toMatch(/32 forwarded calls have no result entry \(interrupted/);
  await served.close().catch(() => {});
}, 120_000);
