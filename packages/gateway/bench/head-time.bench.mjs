#!/usr/bin/env node
// Time to the HTTP head of a streamed answer: a tool call that takes BENCH_CALL_MS (3 s) on a
// streamable HTTP upstream on loopback, called with plain fetch (which resolves on the head)
// directly and through `mcp serve --http`. Through a relay that holds the head until the first
// event, the head waits for the whole call; one that sends it at once answers in milliseconds.
//   BENCH_BASELINE=/work/main (a built checkout) adds its `mcp serve --http` as `baseline_http`.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort, median } from './lib.mjs';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(repo, 'packages/cli/bin/run.js');
const CALL_MS = Number(process.env.BENCH_CALL_MS ?? 3000);
const CALLS = Number(process.env.BENCH_CALLS ?? 3);
const BASELINE = process.env.BENCH_BASELINE;
const token = 'bench-token-0123456789abcdef0123456789abcdef';
const round = (x) => Number(x.toFixed(1));

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-head-'));
const children = [];
const startChild = (args, env = {}, stdout = 'ignore') => {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'ignore'],
  });
  children.push(child);
  return child;
};

async function startUpstream() {
  await writeFile(
    join(dir, 'tools.json'),
    JSON.stringify([{ name: 'wait', description: 'Waits.', inputSchema: { type: 'object' } }]),
  );
  await writeFile(join(dir, 'b.json'), JSON.stringify({ wait: { delayMs: CALL_MS } }));
  const child = startChild(
    [join(repo, 'test/fixtures/tool-server.mjs'), join(dir, 'tools.json'), join(dir, 'b.json')],
    {},
    'pipe',
  );
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return `http://127.0.0.1:${JSON.parse(line).port}/mcp`;
}

async function startRelay(via, upstreamUrl, name) {
  const home = join(dir, name);
  const add = startChild([via, 'mcp', 'add', 'up', '--url', upstreamUrl], { RINGFENCE_HOME: home });
  await new Promise((resolve) => add.once('exit', resolve));
  const port = await freePort();
  const child = startChild([via, 'mcp', 'serve', '--http', `127.0.0.1:${port}`], {
    RINGFENCE_HOME: home,
    RINGFENCE_MCP_TOKEN: token,
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${name}: mcp serve exited (${child.exitCode})`);
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return url;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name}: ${url} did not come up`);
}

/** Opens a session by hand; returns the headers its calls carry. */
async function session(url, headers) {
  const base = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...headers,
  };
  const init = await fetch(url, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'bench-head', version: '1' },
      },
    }),
  });
  await init.text();
  const withSession = { ...base, 'mcp-session-id': init.headers.get('mcp-session-id') };
  await (
    await fetch(url, {
      method: 'POST',
      headers: withSession,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return withSession;
}

async function measure(url, tool, headers) {
  const withSession = await session(url, headers);
  const heads = [];
  const totals = [];
  for (let i = 1; i <= CALLS; i++) {
    const start = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: withSession,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: tool, arguments: {} },
      }),
    });
    heads.push(performance.now() - start);
    const body = await response.text();
    totals.push(performance.now() - start);
    if (!body.includes(`"id":${i}`)) throw new Error(`${url}: no answer to call ${i}: ${body.slice(0, 200)}`);
  }
  return { head_ms_p50: round(median(heads)), answer_ms_p50: round(median(totals)), calls: CALLS };
}

try {
  const upstream = await startUpstream();
  const auth = { authorization: `Bearer ${token}` };
  const results = { call_ms: CALL_MS };
  results.direct = await measure(upstream, 'wait', {});
  results.ringfence_http = await measure(await startRelay(cli, upstream, 'this'), 'up_wait', auth);
  if (BASELINE) {
    const via = join(BASELINE, 'packages/cli/bin/run.js');
    results.baseline_http = await measure(await startRelay(via, upstream, 'baseline'), 'up_wait', auth);
  }
  console.log(JSON.stringify(results, null, 2));
} finally {
  for (const child of children) child.kill();
  await rm(dir, { recursive: true, force: true });
}
