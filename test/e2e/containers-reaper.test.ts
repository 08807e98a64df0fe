import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import {
  docker,
  eofIgnoringImage,
  listContainers,
  managedObjects,
  probeImage,
  reaperPids,
  refusalFor,
  removeTestContainers,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

/**
 * The requirement is a bound: once a gateway is killed, its containers are gone within 2 s,
 * without any later gateway. Polled every 100 ms up to that bound; nothing else here is timed.
 */
const REAP_BOUND_MS = 2000;

// On an engine that refuses egress allowlists (docs/runtimes.md) the stubborn server gets a
// network of its own instead of a sidecar: still a network and a container to outlive a gateway.
const allowRefused = await refusalFor('allow');
const STUBBORN_EGRESS = allowRefused ? ['--egress', 'any'] : ['--egress-allow', 'example.invalid'];

const sorted = async (objects: Promise<{ containers: string[]; networks: string[] }>) => {
  const { containers, networks } = await objects;
  return { containers: containers.sort(), networks: networks.sort() };
};

const containersOf = async (session: string) =>
  (await listContainers(docker, { all: true, filters: { label: [`ringfence.session=${session}`] } })).map(
    (c) => c.Names[0]!.replace(/^\//, ''),
  );

describe('the reaper: a killed gateway takes its containers with it', () => {
  const sessions = { a: uniqueName('reap-a'), b: uniqueName('reap-b') };
  let home: string;
  let workspace: string;
  let a: { client: Client; pid: number };
  let b: ServedClient;

  beforeAll(async () => {
    home = await freshHome();
    workspace = join(home, '..', 'workspace');
    await mkdir(join(workspace, 'out'), { recursive: true });
    // As root, the gateway runs servers as the image's user (65532), who must be able to write here.
    if (process.getuid?.() === 0) await chmod(join(workspace, 'out'), 0o777);
    const env = { RINGFENCE_HOME: home };
    // A server that ignores the end of its input, with a writable mount and an egress sidecar (a
    // network of its own where the engine refuses sidecars):
    // exactly what must not outlive its gateway.
    const stubborn = ['stubborn', '--image', await eofIgnoringImage(), '--mount', 'out:rw'];
    for (const args of [
      [...stubborn, ...STUBBORN_EGRESS],
      ['probe', '--image', await probeImage()],
    ]) {
      const added = await ringfence(['mcp', 'add', ...args], env);
      expect(added.code, added.stderr).toBe(0);
    }
    // Gateway A is started through setsid, so it leads a process group of its own that the test
    // can kill whole, as a client that kills its child's group would.
    const transport = new StdioClientTransport({
      command: 'setsid',
      args: [process.execPath, cliBin, 'mcp', 'serve', '--session', sessions.a],
      env: { ...(process.env as Record<string, string>), RINGFENCE_HOME: home },
      cwd: workspace,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e-reaper', version: '1.0.0' });
    await client.connect(transport);
    a = { client, pid: transport.pid! };
    b = await connectStdio(home, {}, {}, { cwd: workspace, args: ['--session', sessions.b] });
  });

  afterAll(async () => {
    await a?.client.close().catch(() => {});
    await b?.close().catch(() => {});
    await removeTestContainers();
  });

  it('serves the stubborn server, with one reaper per gateway in a session of its own', async () => {
    for (const client of [a.client, b.client]) {
      const result = await client.callTool({ name: 'stubborn_still_here', arguments: {} });
      expect(firstText(result), firstText(result)).toMatch(/^still here/);
    }
    const labels = (await docker.getContainer(`ringfence-mcp-stubborn-${sessions.a}`).inspect()).Config
      .Labels;
    expect(Number(labels['ringfence.pid'])).toBe(a.pid);
    for (const session of [sessions.a, sessions.b]) {
      const objects = await managedObjects(session);
      expect(objects.containers, JSON.stringify(objects)).toHaveLength(allowRefused ? 2 : 3);
      expect(objects.networks, JSON.stringify(objects)).toHaveLength(allowRefused ? 1 : 2);
      const pids = await reaperPids(session);
      expect(pids, `reapers of ${session}`).toHaveLength(1);
      const stat = await readFile(`/proc/${pids[0]}/stat`, 'utf8');
      // Field 6, the session id, is the reaper's own pid: a kill of the gateway's group misses it.
      expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]).toBe(String(pids[0]));
    }
  });

  it(`kill -9 of the gateway's process group: its containers are gone within ${REAP_BOUND_MS} ms, its networks soon after; the other gateway is untouched`, async () => {
    const before = await sorted(managedObjects(sessions.b));
    const killedAt = Date.now();
    process.kill(-a.pid, 'SIGKILL');
    await expect.poll(() => containersOf(sessions.a), { timeout: REAP_BOUND_MS, interval: 100 }).toEqual([]);
    console.log(`containers of the killed gateway gone after ${Date.now() - killedAt} ms`);
    await expect
      .poll(() => managedObjects(sessions.a), { timeout: 15_000, interval: 250 })
      .toEqual({ containers: [], networks: [] });
    // Its reaper finishes its passes, then exits on its own.
    await expect.poll(() => reaperPids(sessions.a), { timeout: 15_000, interval: 250 }).toEqual([]);
    expect(await readFile(join(home, 'logs', 'reaper.log'), 'utf8')).toMatch(
      new RegExp(
        `session ${sessions.a}\\): the gateway ended without removing its objects; removed containers \\[`,
      ),
    );

    expect(await sorted(managedObjects(sessions.b))).toEqual(before);
    const still = await b.client.callTool({ name: 'probe_probe', arguments: {} });
    expect(still.isError).toBeFalsy();
    expect(await reaperPids(sessions.b)).toHaveLength(1);
  });

  it('a clean exit leaves nothing, and its reaper exits with nothing to remove', async () => {
    await b.close();
    await expect
      .poll(() => managedObjects(sessions.b), { timeout: 30_000, interval: 500 })
      .toEqual({ containers: [], networks: [] });
    await expect.poll(() => reaperPids(sessions.b), { timeout: 15_000, interval: 250 }).toEqual([]);
    expect(await readFile(join(home, 'logs', 'reaper.log'), 'utf8')).not.toContain(sessions.b);
  });
});
