import type { ContainerServerConfig } from '@ringfence/gateway/config';
import type { ContainedServer, ContainedStdio } from '@ringfence/gateway/ports';
import type { ContainerRuntime } from '@ringfence/gateway/runtime';
import { describe, expect, it, vi } from 'vitest';
import { DeferredContainedServer } from './serving.js';

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
