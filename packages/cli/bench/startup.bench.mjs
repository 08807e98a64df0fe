#!/usr/bin/env node
// Start-up, side by side, interleaved rounds, medians (after npm run build):
//  - `node -e 0`, `ringfence --version`, `ringfence --help`: process start to exit;
//  - each command's own load: a fresh `node` importing that command's module (what a run of the
//    command pays on top of oclif, now that the shipped manifest spares loading the others);
//  - `mcp serve` ready with one remote server: spawn to initialize + tools/list answered.
//   node bench/startup.bench.mjs            ROUNDS=3 node bench/startup.bench.mjs
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const repo = join(here, '../..');
const cli = join(here, 'bin/run.js');
const ROUNDS = Number(process.env.ROUNDS ?? 5);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const shuffle = (xs) => {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
};

function timed(args, env = process.env) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  return ms(start);
}

function commandFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return commandFiles(path);
    return name.endsWith('.js') ? [path] : [];
  });
}
const commandsDir = join(here, 'dist/commands');
const commands = commandFiles(commandsDir).map((file) => ({
  id: relative(commandsDir, file).replace(/\.js$/, '').split('/').join(' '),
  file,
}));

/** Import time of one module in a fresh process, measured inside it (process start excluded). */
function importMs(file) {
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const t = performance.now(); await import(${JSON.stringify(file)}); process.stdout.write(String(performance.now() - t));`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return Number(r.stdout);
}

const dir = await mkdtemp(join(tmpdir(), 'rf-bench-startup-'));
const home = join(dir, 'home');
const tools = join(dir, 'tools.json');
await writeFile(
  tools,
  JSON.stringify([{ name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: {} } }]),
);
await writeFile(join(dir, 'b.json'), '{}');
const upstream = spawn(
  process.execPath,
  [join(repo, 'test/fixtures/tool-server.mjs'), tools, join(dir, 'b.json')],
  {
    stdio: ['ignore', 'pipe', 'ignore'],
  },
);
try {
  const line = await new Promise((resolve) =>
    createInterface({ input: upstream.stdout }).once('line', resolve),
  );
  const url = `http://127.0.0.1:${JSON.parse(line).port}/mcp`;
  const env = { ...process.env, RINGFENCE_HOME: home };
  const add = spawnSync(process.execPath, [cli, 'mcp', 'add', 'up', '--url', url], { env });
  if (add.status !== 0) throw new Error(add.stderr.toString());

  async function serveReady() {
    const start = process.hrtime.bigint();
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, 'mcp', 'serve'],
        env,
        stderr: 'ignore',
      }),
    );
    const { tools: listed } = await client.listTools();
    const elapsed = ms(start);
    if (listed.length !== 1) throw new Error(`expected 1 tool, got ${listed.length}`);
    await client.close();
    return elapsed;
  }

  const variants = [
    { name: 'node -e 0', run: () => timed(['-e', '0']) },
    { name: 'ringfence --version', run: () => timed([cli, '--version']) },
    { name: 'ringfence --help', run: () => timed([cli, '--help']) },
    { name: 'mcp serve ready (1 remote)', run: serveReady },
    ...commands.map((c) => ({ name: `load: ${c.id}`, run: () => importMs(c.file) })),
  ];
  const samples = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (const v of variants) await v.run(); // warm the page cache
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of shuffle(variants)) samples[v.name].push(await v.run());
    process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const result = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, Math.round(median(xs))]));
  const node0 = result['node -e 0'];
  console.log(`start-up, median of ${ROUNDS} interleaved rounds (ms; node ${process.version})`);
  for (const [k, v] of Object.entries(result)) {
    const extra =
      k.startsWith('load:') || k === 'node -e 0' ? '' : `  (${(v / node0).toFixed(1)}x node -e 0)`;
    console.log(`  ${k.padEnd(30)} ${String(v).padStart(6)}${extra}`);
  }
} finally {
  upstream.kill();
  await rm(dir, { recursive: true, force: true });
}
