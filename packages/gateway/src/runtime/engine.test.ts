import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createDockerClient,
  defaultSocketCandidates,
  describeEngine,
  type EngineInfo,
  engineRefusal,
  probeEngine,
  resolveEngineEndpoint,
} from './engine.js';

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

  it('tries Docker, then rootful Podman, then rootless Podman', () => {
    const env = { XDG_RUNTIME_DIR: '/run/user/1000' };
    const order = defaultSocketCandidates(env);
    const at = (path: string) => order.indexOf(path);
    expect(at('/var/run/docker.sock')).toBe(0);
    expect(at('/run/podman/podman.sock')).toBeGreaterThan(at('/var/run/docker.sock'));
    expect(at('/run/user/1000/podman/podman.sock')).toBeGreaterThan(at('/run/podman/podman.sock'));
    const both = new Set(['/run/podman/podman.sock', '/run/user/1000/podman/podman.sock']);
    expect(resolveEngineEndpoint(env, (path) => both.has(path)).host).toBe('unix:///run/podman/podman.sock');
    expect(resolveEngineEndpoint(env, (path) => path === '/var/run/docker.sock' || both.has(path)).host).toBe(
      'unix:///var/run/docker.sock',
    );
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

describe('engineRefusal: what an engine cannot contain is refused, with what to use instead', () => {
  const podman = (extra: Partial<EngineInfo>): EngineInfo => ({
    kind: 'podman',
    version: '4.3.1',
    apiVersion: '1.41',
    ...extra,
  });

  it('rootless on cgroups v1 cannot bound a server: every egress mode is refused', () => {
    for (const mode of ['deny', 'allow', 'any'] as const) {
      const reason = engineRefusal(podman({ mode: 'rootless', cgroupVersion: '1' }), mode);
      expect(reason).toMatch(/cgroups v1.*limits/);
      expect(reason).toContain('systemd.unified_cgroup_hierarchy=1');
    }
    expect(
      engineRefusal({ ...podman({ mode: 'rootless', cgroupVersion: '1' }), kind: 'docker' }, 'deny'),
    ).toMatch(/cgroups v1/);
  });

  it('rootful podman (or podman that does not say) refuses egress allow: the host has an address on internal networks', () => {
    for (const info of [podman({ mode: 'rootful', cgroupVersion: '2' }), podman({})]) {
      const reason = engineRefusal(info, 'allow');
      expect(reason).toContain('could reach services listening on the host');
      expect(reason).toContain('DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock');
      expect(engineRefusal(info, 'deny')).toBeUndefined();
    }
  });

  it('keeps the contract on Docker and on rootless podman with cgroups v2', () => {
    for (const mode of ['deny', 'allow', 'any'] as const) {
      expect(engineRefusal(podman({ mode: 'rootless', cgroupVersion: '2' }), mode)).toBeUndefined();
      expect(
        engineRefusal({ kind: 'docker', version: '28.0.0', apiVersion: '1.47', mode: 'rootful' }, mode),
      ).toBeUndefined();
    }
  });

  it('names engine, version and mode for people', () => {
    expect(describeEngine(podman({ mode: 'rootless' }))).toBe('podman 4.3.1, rootless');
    expect(describeEngine({ kind: 'docker', version: '28.0.0', apiVersion: '1.47' })).toBe('docker 28.0.0');
  });
});
