import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContainerRuntime } from '@ringfence/gateway/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reaperPids, uniqueName } from '../helpers/containers.js';

/**
 * An engine on a unix socket of the test's own that answers the reaper's ping (so the real
 * reaper, from the build, starts and watches) but fails the gateway at a later step: the probe,
 * or the sidecar image lookup. No container is ever created, so the reaper must not outlive the
 * runtime's start.
 */
function fakeEngine(
  socketPath: string,
  failing: 'version' | 'images',
  beforeFailing: () => Promise<void>,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/v[\d.]+/, '').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/_ping') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return res.end('OK');
    }
    if (path === `/${failing}` || (failing === 'images' && path === '/images/json')) {
      void beforeFailing().then(() => json(500, { message: `fake engine: ${failing} is broken` }));
      return;
    }
    if (path === '/version') return json(200, { Version: '20.10.24', ApiVersion: '1.41', Components: [] });
    if (path === '/info') return json(200, {});
    if (path === '/containers/json' || path === '/networks') return json(200, []);
    json(404, { message: `fake engine: no ${path}` });
  });
  return new Promise((resolve) => server.listen(socketPath, () => resolve(server)));
}

describe('a container runtime given up before any container exists leaves no reaper running', () => {
  let dir: string;
  let server: Server | undefined;
  const sessions: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-giveup-'));
  });
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });
  afterAll(async () => {
    // Only what this file started: reapers of its own sessions.
    for (const session of sessions) for (const pid of await reaperPids(session)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  const start = async (failing: 'version' | 'images') => {
    const socket = join(dir, `${failing}.sock`);
    const session = uniqueName(`giveup-${failing}`);
    sessions.push(session);
    // The failing answer waits until this session's reaper runs, so the test shows one that was
    // running being stopped (not one that never started).
    const seen = { reaper: false };
    server = await fakeEngine(socket, failing, async () => {
      for (let waited = 0; !seen.reaper && waited < 15_000; waited += 100) {
        seen.reaper = (await reaperPids(session)).length > 0;
        if (!seen.reaper) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    const lines: string[] = [];
    const runtime = createContainerRuntime({
      home: join(dir, 'home'),
      session,
      log: (line) => lines.push(line),
      audit: { append: async () => ({}) } as never,
      workspaceRoots: [],
      env: { ...process.env, DOCKER_HOST: `unix://${socket}` },
    });
    return { runtime, session, lines, seen };
  };

  it('an engine that answers the ping but not the probe: unavailable, with its answer, and no reaper', async () => {
    const { runtime, session, lines, seen } = await start('version');
    const built = await runtime;
    expect(seen.reaper).toBe(true);
    expect(built.available).toBe(false);
    expect(built.available === false && built.reason).toMatch(/fake engine: version is broken/);
    expect(await reaperPids(session)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('a failure after the probe (the image list): the start fails with it, and no reaper', async () => {
    const { runtime, session, seen } = await start('images');
    await expect(runtime).rejects.toThrow(/fake engine: images is broken/);
    expect(seen.reaper).toBe(true);
    expect(await reaperPids(session)).toEqual([]);
  });
});
