#!/usr/bin/env node
// Start-up, side by side, interleaved rounds, medians (after npm run build):
//  - `node -e 0`, `ringfence --version`, `ringfence --help`: process start to exit;
//  - each command's own load: a fresh `node` importing that command's module (what a run of the
//    command pays on top of oclif, now that the shipped manifest spares loading the others);
//  - `mcp serve` ready with one remote server and with one container server: spawn to
//    initialize + tools/list answered, and the CPU the gateway process used by then (from /proc:
//    what the machine's load disturbs least), beside `docker run -i` of the same image driven by
//    the same client;
//  - with BENCH_BASELINE=<a built checkout> (e.g. /work/main), that checkout's --version, --help
//    and serve-ready in the same interleaved rounds, so a change is judged under the same load.
//   node bench/startup.bench.mjs            ROUNDS=3 BENCH_BASELINE=/work/main node bench/startup.bench.mjs
//   BENCH_CONTAINERS=0 leaves out the container rows (no engine needed); BENCH_COMMAND_LOADS=0
//   leaves out the per-command load rows (the goals bench wants --version only, quickly).
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createDockerClient } from '@ringfence/gateway/runtime';
import { buildProbeImage, cpuMs, median } from '../../gateway/bench/lib.mjs';

const here = fileURLToPath(new URL('..', import.meta.url));
const repo = join(here, '../..');
const cli = join(here, 'bin/run.js');
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const BASELINE = process.env.BENCH_BASELINE;
const baselineCli = BASELINE && join(BASELINE, 'packages/cli/bin/run.js');
const CONTAINERS = process.env.BENCH_CONTAINERS !== '0';
const COMMAND_LOADS = process.env.BENCH_COMMAND_LOADS !== '0';

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
// Stopped halfway (Ctrl-C): leave no test server behind.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    upstream.kill();
    process.exit(130);
  });
}
try {
  const line = await new Promise((resolve) =>
    createInterface({ input: upstream.stdout }).once('line', resolve),
  );
  const url = `http://127.0.0.1:${JSON.parse(line).port}/mcp`;
  /** A home per build (the baseline may read its registry differently) with these servers. */
  const homeFor = (which, build, adds) => {
    const path = join(dir, `${which}-home-${build === cli ? 'this' : 'baseline'}`);
    for (const args of adds) {
      const r = spawnSync(process.execPath, [build, 'mcp', 'add', ...args], {
        env: { ...process.env, RINGFENCE_HOME: path },
      });
      if (r.status !== 0) throw new Error(r.stderr.toString());
    }
    return path;
  };

  /** Spawn to initialize + tools/list answered; CPU of the spawned process by then (ms, /proc). */
  async function ready(command, args, env, expected) {
    const start = process.hrtime.bigint();
    const client = new Client({ name: 'bench', version: '1' });
    const transport = new StdioClientTransport({ command, args, env, stderr: 'ignore' });
    await client.connect(transport);
    const { tools: listed } = await client.listTools();
    const elapsed = ms(start);
    const cpu = cpuMs(transport.pid);
    if (listed.length !== expected) throw new Error(`expected ${expected} tool(s), got ${listed.length}`);
    await client.close();
    return { ms: elapsed, cpu };
  }
  const serveReady = (build, home) => () =>
    ready(process.execPath, [build, 'mcp', 'serve'], { ...process.env, RINGFENCE_HOME: home }, 1);

  const builds = [{ label: '', cli }, ...(baselineCli ? [{ label: 'baseline: ', cli: baselineCli }] : [])];
  let image;
  if (CONTAINERS) {
    image = await buildProbeImage(createDockerClient());
  }
  const variants = [
    { name: 'node -e 0', run: () => timed(['-e', '0']) },
    ...builds.flatMap(({ label, cli: build }) => [
      { name: `${label}ringfence --version`, run: () => timed([build, '--version']) },
      { name: `${label}ringfence --help`, run: () => timed([build, '--help']) },
      {
        name: `${label}mcp serve ready (1 remote)`,
        run: serveReady(build, homeFor('remote', build, [['up', '--url', url]])),
      },
      ...(image
        ? [
            {
              name: `${label}mcp serve ready (1 container)`,
              run: serveReady(build, homeFor('container', build, [['c0', '--image', image.ref]])),
            },
          ]
        : []),
    ]),
    ...(image
      ? [
          {
            name: 'docker run -i ready (same image)',
            run: () => ready('docker', ['run', '-i', '--rm', '--network', 'none', image.ref], process.env, 1),
          },
        ]
      : []),
    ...(COMMAND_LOADS ? commands : []).map((c) => ({ name: `load: ${c.id}`, run: () => importMs(c.file) })),
  ];
  const samples = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (const v of variants) await v.run(); // warm the page cache (and pin the tools once)
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of shuffle(variants)) samples[v.name].push(await v.run());
    process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const med = (name, key) => {
    const xs = samples[name];
    return xs && median(xs.map((x) => (typeof x === 'number' ? x : x[key])));
  };
  const node0 = med('node -e 0');
  console.log(`start-up, median of ${ROUNDS} interleaved rounds (ms; node ${process.version})`);
  for (const { name } of variants) {
    const wall = Math.round(med(name, 'ms'));
    const cpu = typeof samples[name][0] === 'object' ? `  cpu ${Math.round(med(name, 'cpu'))} ms` : '';
    const base = name.startsWith('baseline: ')
      ? undefined
      : samples[`baseline: ${name}`] && med(`baseline: ${name}`, 'ms');
    const extra = [
      name.startsWith('load:') || name === 'node -e 0' ? '' : `${(wall / node0).toFixed(1)}x node -e 0`,
      base ? `${(wall / base).toFixed(2)}x baseline` : '',
      name.includes('(1 container)') && samples['docker run -i ready (same image)']
        ? `${(wall / med('docker run -i ready (same image)', 'ms')).toFixed(2)}x docker run -i`
        : '',
    ].filter(Boolean);
    console.log(
      `  ${name.padEnd(40)} ${String(wall).padStart(6)}${cpu}${extra.length ? `  (${extra.join(', ')})` : ''}`,
    );
  }
} finally {
  upstream.kill();
  await rm(dir, { recursive: true, force: true });
}
