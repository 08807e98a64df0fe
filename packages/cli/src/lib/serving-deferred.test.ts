import type { ContainerServerConfig } from '@ringfence/gateway/config';
import type { ContainedServer, ContainedStdio } from '@ringfence/gateway/ports';
import type { ContainerRuntime } from '@ringfence/gateway/runtime';
import { describe, expect, it, vi } from 'vitest';
import { DeferredContainedServer, EarlyContainers, UNDER_WAY_WAIT_MS } from './serving.js';

const config = {
  name: 'docs',
  transport: 'container',
  image: 'example/docs@sha256:0',
} as unknown as ContainerServerConfig;

function fakeRuntime() {
  const exitListeners: ((reason: string) => void)[] = [];
  const inner: ContainedServer = {
    start: vi.fn(async () => ({}) as ContainedStdio),
    onExit: (listener) => exitListeners.push(listener),
    stderr: () => 'inner stderr',
    stop: vi.fn(async () => {}),
  };
  const launch = vi.fn(() => inner);
  const runtime = { available: true, launch, flushAudit: () => {} } as unknown as ContainerRuntime;
  return { runtime, launch, inner, exitListeners };
}

describe('DeferredContainedServer', () => {
  it('builds the runtime only when started, then hands over to the launched server', async () => {
    const { runtime, launch, inner, exitListeners } = fakeRuntime();
    const build = vi.fn(async () => runtime);
    const server = new DeferredContainedServer(config, build);
    const exits: string[] = [];
    server.onExit((reason) => exits.push(reason));
    expect(build).not.toHaveBeenCalled();
    expect(server.stderr()).toBe('');
    await server.start();
    expect(build).toHaveBeenCalledTimes(1);
    expect(launch).toHaveBeenCalledWith(config);
    expect(inner.start).toHaveBeenCalledTimes(1);
    for (const listener of exitListeners) listener('exited 1');
    expect(exits).toEqual(['exited 1']);
    expect(server.stderr()).toBe('inner stderr');
    await server.stop();
    expect(inner.stop).toHaveBeenCalledTimes(1);
  });

  it('creates nothing when stopped while the runtime was still being built', async () => {
    const { runtime, launch } = fakeRuntime();
    let release: (r: ContainerRuntime) => void = () => {};
    const server = new DeferredContainedServer(config, () => new Promise((r) => (release = r)));
    const starting = server.start();
    await server.stop();
    release(runtime);
    await expect(starting).rejects.toMatchObject({ code: 'SERVER_STOPPED_WHILE_STARTING' });
    expect(launch).not.toHaveBeenCalled();
  });

  it('fails the start with the engine’s answer and the command to run when no engine answers', async () => {
    const unavailable = {
      available: false,
      reason: 'connect ENOENT /var/run/docker.sock',
    } as ContainerRuntime;
    const server = new DeferredContainedServer(config, async () => unavailable);
    const failure = server.start();
    await expect(failure).rejects.toMatchObject({ code: 'CONTAINERS_UNAVAILABLE' });
    await expect(failure).rejects.toThrow(/connect ENOENT \/var\/run\/docker\.sock.*ringfence doctor/);
  });
});

describe('EarlyContainers (container servers begun before the gateway asks)', () => {
  it('hands the gateway the server it began for that name, started once', async () => {
    const { runtime, launch, inner } = fakeRuntime();
    const early = new EarlyContainers([config], async () => runtime);
    await vi.waitFor(() => expect(inner.start).toHaveBeenCalledTimes(1));
    // The gateway adds what the policy allows of server requests; that does not change the container.
    const taken = early.take({ ...config, allow_sampling: false } as ContainerServerConfig);
    await taken.start();
    expect(launch).toHaveBeenCalledTimes(1);
    expect(inner.start).toHaveBeenCalledTimes(1);
    await early.stop();
    expect(inner.stop).not.toHaveBeenCalled();
  });

  it('stops, at close, what the gateway never took', async () => {
    const { runtime, inner } = fakeRuntime();
    const early = new EarlyContainers([config], async () => runtime);
    await vi.waitFor(() => expect(inner.start).toHaveBeenCalledTimes(1));
    await early.stop();
    expect(inner.stop).toHaveBeenCalledTimes(1);
  });

  it('keeps a failed early start for the gateway to report, without an unhandled rejection', async () => {
    const unavailable = {
      available: false,
      reason: 'connect ENOENT /var/run/docker.sock',
    } as ContainerRuntime;
    const early = new EarlyContainers([config], async () => unavailable);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(early.take(config).start()).rejects.toMatchObject({ code: 'CONTAINERS_UNAVAILABLE' });
  });

  it('lets the endpoint load after a bounded wait when an engine step before the start never answers', async () => {
    // An engine that takes a create (or a network, the reaper, the sidecar) and never answers:
    // the start is never sent, and its own 60 s budget is the gateway's, which is not loaded yet.
    // Waiting for the start to be sent must not hold mcp serve's endpoint back for good.
    vi.useFakeTimers();
    try {
      const { runtime, inner } = fakeRuntime();
      vi.mocked(inner.start).mockImplementation(() => new Promise<ContainedStdio>(() => {}));
      const early = new EarlyContainers([config], async () => runtime);
      let settled = false;
      void early.underWay().then(() => {
        settled = true;
      });
      await vi.advanceTimersByTimeAsync(UNDER_WAY_WAIT_MS - 1);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toBe(true);
      expect(inner.start).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells a listener that comes late about an exit that came first', async () => {
    const { runtime, exitListeners } = fakeRuntime();
    const server = new DeferredContainedServer(config, async () => runtime);
    await server.start();
    for (const listener of exitListeners) listener('its container exited with code 1');
    const exits: string[] = [];
    server.onExit((reason) => exits.push(reason));
    expect(exits).toEqual(['its container exited with code 1']);
  });
});
