import { describe, expect, it } from 'vitest';
import type { ContainerServerConfig } from '../config/servers.js';
import { type ResolvedMount, SERVER_DNS, serverContainerSpec, serverEnvironment } from './container-spec.js';
import { containerProcessLimits } from './process-limits.js';

const config: ContainerServerConfig = {
  name: 'files',
  transport: 'container',
  image: 'example/files:1',
  image_id: `sha256:${'a'.repeat(64)}`,
  egress: { mode: 'allow', hosts: ['api.example.com'] },
  env: { TOKEN: 'x' },
};
const processLimits = containerProcessLimits({ nofile: 2048, nproc: 512 });
const base = { session: 'sess', network: 'net-in', mounts: [], proxyAddress: '10.1.2.3', processLimits };

describe('serverContainerSpec', () => {
  it("on rootless podman, a writable mount keeps the caller's uid (keep-id), not a subordinate one", () => {
    const mount = {
      requested: 'out',
      source: '/home/me/ws/out',
      target: '/workspace/out',
      readOnly: false,
      identity: { dev: 1n, ino: 2n },
    };
    const user = { uid: 1000, gid: 1000 };
    const rootless = serverContainerSpec(config, { ...base, mounts: [mount], user, rootlessPodman: true });
    expect(rootless.User).toBe('1000:1000');
    expect(rootless.HostConfig?.UsernsMode).toBe('keep-id');
    // Elsewhere uids are not remapped (Docker, rootful), and a read-only mount needs no user.
    expect(
      serverContainerSpec(config, { ...base, mounts: [mount], user }).HostConfig?.UsernsMode,
    ).toBeUndefined();
    const readOnly = serverContainerSpec(config, {
      ...base,
      mounts: [{ ...mount, readOnly: true }],
      user,
      rootlessPodman: true,
    });
    expect(readOnly.HostConfig?.UsernsMode).toBeUndefined();
  });

  it('runs the recorded image ID with every hardening flag, and a tmpfs over each image VOLUME', () => {
    const spec = serverContainerSpec(config, { ...base, imageVolumes: ['/data', '/tmp'] });
    expect(spec.Image).toBe(config.image_id);
    expect(spec.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      NetworkMode: 'net-in',
      LogConfig: { Type: 'none' },
    });
    expect(spec.HostConfig?.Tmpfs).toEqual({
      '/tmp': 'rw,nosuid,nodev,size=64m',
      '/data': 'rw,nosuid,nodev,size=64m',
    });
    expect(spec.ExposedPorts).toBeUndefined();
  });

  it("names its nofile and nproc limits instead of leaving them to the engine's defaults", () => {
    expect(serverContainerSpec(config, base).HostConfig?.Ulimits).toEqual([
      { Name: 'nofile', Soft: 1024, Hard: 2048 },
      { Name: 'nproc', Soft: 512, Hard: 512 },
    ]);
  });

  it('runs a server with a writable mount as the invoking user, but never as root', () => {
    const mounts: ResolvedMount[] = [
      {
        requested: 'out',
        source: '/w/out',
        target: '/workspace/out',
        readOnly: false,
        identity: { dev: 1n, ino: 2n },
      },
    ];
    const as = (user: { uid: number; gid: number }, m = mounts) =>
      serverContainerSpec(config, { ...base, mounts: m, user }).User;
    expect(as({ uid: 1000, gid: 1000 })).toBe('1000:1000');
    expect(as({ uid: 0, gid: 0 })).toBeUndefined();
    expect(as({ uid: 1000, gid: 1000 }, [{ ...mounts[0]!, readOnly: true }])).toBeUndefined();
  });

  it('gives only the declared env, HOME and the proxy variables, naming the sidecar by address', () => {
    expect(serverEnvironment(config, '10.1.2.3')).toEqual([
      'TOKEN=x',
      'HOME=/tmp',
      'HTTP_PROXY=http://10.1.2.3:3128',
      'HTTPS_PROXY=http://10.1.2.3:3128',
      'http_proxy=http://10.1.2.3:3128',
      'https_proxy=http://10.1.2.3:3128',
      'NO_PROXY=localhost,127.0.0.1,::1',
      'no_proxy=localhost,127.0.0.1,::1',
    ]);
    expect(() => serverEnvironment(config)).toThrow(/needs its sidecar's address/);
  });

  it('gives an allow server no resolver but its own loopback, and the proxy in /etc/hosts', () => {
    const spec = serverContainerSpec(config, base);
    expect(spec.HostConfig?.Dns).toEqual([SERVER_DNS]);
    expect(spec.HostConfig?.ExtraHosts).toEqual(['egress:10.1.2.3']);
    const deny = serverContainerSpec({ ...config, egress: { mode: 'deny' } }, { ...base, network: 'none' });
    expect(deny.HostConfig?.Dns).toBeUndefined();
    expect(deny.NetworkDisabled).toBe(true);
  });
});
