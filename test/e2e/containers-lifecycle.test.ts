import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  managedObjects,
  probeImage,
  reaperPids,
  refusalFor,
  removeTestContainers,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

const SERVERS = ['p1', 'p2', 'p3', 'p4', 'p5'];
// Tags of this run's own: another run on the same engine must not move or remove them.
const TAG = `v1-${process.pid}`;
// Where the engine refuses egress allowlists (docs/runtimes.md), p2 and p3 get a network of their
// own instead of an internal one and a sidecar: still networks created concurrently.
const allowRefused = await refusalFor('allow');
const NETWORKED = allowRefused ? ['--egress', 'any'] : ['--egress-allow', 'example.invalid'];
const SIDECARS = allowRefused ? 0 : 2;
const NETWORKS = allowRefused ? 2 : 4;

describe('container lifecycle: concurrent start, failures, sweep of dead gateways', () => {
  let home: string;
  const env = () => ({ RINGFENCE_HOME: home });
  const sessions = { a: uniqueName('life-a'), b: uniqueName('life-b'), c: uniqueName('life-c') };
  const clients: ServedClient[] = [];
  const serve = async (session: string) => {
    const client = await connectStdio(home, {}, {}, { args: ['--session', session] });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    home = await freshHome();
    const probe = await probeImage();
    // p2 and p3 egress through their own sidecars, so five start concurrently with networks too.
    for (const [index, name] of SERVERS.entries()) {
      const args = index === 1 || index === 2 ? NETWORKED : [];
      const added = await ringfence(['mcp', 'add', name, '--image', probe, ...args], env());
      expect(added.code, added.stderr).toBe(0);
    }
    // A server whose image tag is removed after registration, and one whose tag moves.
    const base = (await docker.getImage(probe).inspect()).Id;
    await docker.getImage(probe).tag({ repo: 'ringfence-test/vanishing', tag: TAG });
    await docker.getImage(probe).tag({ repo: 'ringfence-test/moving', tag: TAG });
    for (const [name, ref] of [
      ['vanishing', `ringfence-test/vanishing:${TAG}`],
      ['moving', `ringfence-test/moving:${TAG}`],
    ]) {
      expect((await ringfence(['mcp', 'add', name!, '--image', ref!], env())).code).toBe(0);
    }
    await docker.getImage(`ringfence-test/vanishing:${TAG}`).remove();
    const other = (await docker.listImages({ filters: { reference: ['ringfence/node-base'] } }))[0]!.Id;
    expect(other).not.toBe(base);
    await docker.getImage(other).tag({ repo: 'ringfence-test/moving', tag: TAG });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await docker
      .getImage(`ringfence-test/moving:${TAG}`)
      .remove()
      .catch(() => {});
    await removeTestContainers();
  });

  it('starts five servers at once; missing and moved images are skipped with the command that fixes them', async () => {
    const a = await serve(sessions.a);
    const names = (await a.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(SERVERS.map((s) => `${s}_probe`));
    expect(a.stderr()).toMatch(
      /vanishing failed to start and is skipped: .*not on this host.*ringfence mcp pull vanishing/,
    );
    expect(a.stderr()).toMatch(
      /moving failed to start and is skipped: .*tag ringfence-test\/moving:v1-\d+ moved.*ringfence mcp pull moving/,
    );
    const objects = await managedObjects(sessions.a);
    expect(objects.containers.filter((n) => n.startsWith('ringfence-mcp-'))).toHaveLength(5);
    expect(objects.containers.filter((n) => n.startsWith('ringfence-egress-'))).toHaveLength(SIDECARS);
    expect(objects.networks).toHaveLength(NETWORKS);
  });

  it('a server killed mid-call: that call fails saying so, the others carry on', async () => {
    const a = clients[0]!;
    const slow = a.client.callTool({ name: 'p1_probe', arguments: { sleepMs: 20_000 } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await docker.getContainer(`ringfence-mcp-p1-${sessions.a}`).kill();
    const result = await slow;
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(
      /p1\/probe failed: the server stopped before it answered: its container exited/,
    );
    const next = await a.client.callTool({ name: 'p1_probe', arguments: {} });
    expect(next.isError).toBe(true);
    expect(firstText(next)).toMatch(/not available \(its container exited/);
    const other = await a.client.callTool({ name: 'p4_probe', arguments: {} });
    expect(other.isError).toBeFalsy();
  });

  it('SIGKILL a gateway and its reaper: the next one sweeps its leftovers and leaves a live gateway alone', async () => {
    const a = clients[0]!;
    const b = await serve(sessions.b);
    expect((await b.client.listTools()).tools).toHaveLength(5);
    const pid = Number(
      (await docker.getContainer(`ringfence-mcp-p2-${sessions.a}`).inspect()).Config.Labels['ringfence.pid'],
    );
    // The reaper is the first line (containers-reaper.test.ts); without it, the sweep is the second.
    const reapers = await reaperPids(sessions.a);
    expect(reapers).toHaveLength(1);
    for (const reaper of reapers) process.kill(reaper, 'SIGKILL');
    process.kill(pid, 'SIGKILL');
    await a.close().catch(() => {});
    expect((await managedObjects(sessions.a)).containers.length).toBeGreaterThan(0);

    const c = await serve(sessions.c);
    expect(c.stderr()).toMatch(
      new RegExp(
        `removed \\d+ container\\(s\\) and ${NETWORKS} network\\(s\\) left by gateways that no longer run`,
      ),
    );
    expect(await managedObjects(sessions.a)).toEqual({ containers: [], networks: [] });
    const live = await managedObjects(sessions.b);
    expect(live.containers).toHaveLength(5 + SIDECARS);
    const stillServing = await b.client.callTool({ name: 'p3_probe', arguments: {} });
    expect(stillServing.isError).toBeFalsy();
  });

  it('a clean exit leaves no containers or networks behind', async () => {
    for (const client of clients.slice(1)) await client.close();
    for (const session of [sessions.b, sessions.c]) {
      await expect
        .poll(() => managedObjects(session), { timeout: 30_000, interval: 500 })
        .toEqual({ containers: [], networks: [] });
    }
  });
});
