import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDockerClient, probeEngine, resolveEngineEndpoint } from './engine.js';

describe('resolveEngineEndpoint', () => {
  it('honours DOCKER_HOST with a unix socket', () => {
    const endpoint = resolveEngineEndpoint(
      { DOCKER_HOST: 'unix:///run/user/1000/podman/podman.sock' },
      () => false,
    );
    expect(endpoint).toMatchObject({
      source: 'DOCKER_HOST',
      options: { socketPath: '/run/user/1000/podman/podman.sock' },
    });
  });

  it('honours DOCKER_HOST with tcp, and TLS on 2376', () => {
    expect(resolveEngineEndpoint({ DOCKER_HOST: 'tcp://127.0.0.1:2375' }, () => false).options).toEqual({
      host: '127.0.0.1',
      port: 2375,
      protocol: 'http',
    });
    expect(resolveEngineEndpoint({ DOCKER_HOST: 'tcp://127.0.0.1:2376' }, () => false).options.protocol).toBe(
      'https',
    );
  });

  it('refuses a DOCKER_HOST it cannot use, saying what to write instead', () => {
    expect(() => resolveEngineEndpoint({ DOCKER_HOST: 'ssh://user@host' }, () => false)).toThrow(
      /unix:\/\/ or tcp:\/\//,
    );
    expect(() => resolveEngineEndpoint({ DOCKER_HOST: 'unix://' }, () => false)).toThrow(/names no socket/);
  });

  it('finds the Podman socket when Docker has none', () => {
    const endpoint = resolveEngineEndpoint(
      { XDG_RUNTIME_DIR: '/run/user/1000' },
      (path) => path === '/run/user/1000/podman/podman.sock',
    );
    expect(endpoint).toMatchObject({
      source: 'default-socket',
      host: 'unix:///run/user/1000/podman/podman.sock',
    });
  });

  it('says "none" when no socket exists', () => {
    expect(resolveEngineEndpoint({}, () => false).source).toBe('none');
  });
});

describe('probeEngine', () => {
  it('reports an absent socket as ENGINE_UNREACHABLE with the fix', async () => {
    const endpoint = resolveEngineEndpoint({ DOCKER_HOST: 'unix:///nonexistent/ringfence-test.sock' });
    await expect(probeEngine(createDockerClient(endpoint), endpoint, 2000)).rejects.toMatchObject({
      code: 'ENGINE_UNREACHABLE',
      message: expect.stringContaining('scripts/ensure-engine'),
    });
  });

  it('times out on a socket that accepts but never answers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-engine-'));
    const socketPath = join(dir, 'silent.sock');
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const endpoint = resolveEngineEndpoint({ DOCKER_HOST: `unix://${socketPath}` });
      await expect(probeEngine(createDockerClient(endpoint), endpoint, 300)).rejects.toMatchObject({
        code: 'ENGINE_UNREACHABLE',
        message: expect.stringContaining('did not answer'),
      });
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
