// What the gateway's and the CLI's benches share: medians and percentiles, CPU time from /proc,
// a free loopback port, and the probe server image (test/fixtures/probe-server.mjs on the Node
// base image) that contained benches and the demo run.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildContextImage, buildNodeBaseImage } from '@ringfence/gateway/images';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export const percentile = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** CPU milliseconds (user + system, every thread) a process has used so far; NaN if unreadable. */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}

/** A port on 127.0.0.1 that nothing listens on right now. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The probe server's image, built offline from the local Node runtime (a no-op when it exists). */
export async function buildProbeImage(docker, repository = 'ringfence-bench/probe') {
  const base = await buildNodeBaseImage(docker);
  return buildContextImage(docker, {
    repository,
    context: {
      dockerfile: `FROM ${base.ref}\nCOPY probe-server.mjs /app/probe-server.mjs\nUSER 65532:65532\nENTRYPOINT ["node","/app/probe-server.mjs"]\n`,
      files: [
        {
          path: 'probe-server.mjs',
          mode: 0o644,
          source: { hostPath: join(repo, 'test/fixtures/probe-server.mjs') },
        },
      ],
    },
  });
}

/**
 * The fixture's streamable-HTTP server (test/fixtures/tool-server.mjs) with one `echo` tool, on
 * loopback; its files go in `dir`. `stderr`: where its own log goes ('inherit' or 'ignore').
 */
export async function startEchoUpstream(dir, stderr = 'inherit') {
  const tools = join(dir, 'tools.json');
  await writeFile(
    tools,
    JSON.stringify([
      {
        name: 'echo',
        description: 'Echo.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    ]),
  );
  await writeFile(join(dir, 'b.json'), '{}');
  const child = spawn(
    process.execPath,
    [join(repo, 'test/fixtures/tool-server.mjs'), tools, join(dir, 'b.json')],
    {
      stdio: ['ignore', 'pipe', stderr],
    },
  );
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { child, url: `http://127.0.0.1:${JSON.parse(line).port}/mcp` };
}
