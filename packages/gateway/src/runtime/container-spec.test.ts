import { describe, expect, it } from 'vitest';
import type { ContainerServerConfig } from '../config/servers.js';
import { serverContainerSpec, serverEnvironment } from './container-spec.js';

const config: ContainerServerConfig = {
  name: 'files',
  transport: 'container',
  image: 'example/files:1',
  image_id: `sha256:${'a'.repeat(64)}`,
  egress: { mode: 'allow', hosts: ['api.example.com'] },
  env: { TOKEN: 'x' },
};

describe('serverContainerSpec', () => {
  it('runs the recorded image ID with every hardening flag, and a tmpfs over each image VOLUME', () => {
    const spec = serverContainerSpec(config, 'sess', 'net-in', [], undefined, ['/data', '/tmp']);
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

  it('runs a server with a writable mount as the invoking user, but never as root', () => {
    const mount = [{ source: '/w/out', target: '/workspace/out', readOnly: false }];
    expect(serverContainerSpec(config, 's', 'n', mount, { uid: 1000, gid: 1000 }).User).toBe('1000:1000');
    expect(serverContainerSpec(config, 's', 'n', mount, { uid: 0, gid: 0 }).User).toBeUndefined();
    expect(
      serverContainerSpec(config, 's', 'n', [{ ...mount[0]!, readOnly: true }], { uid: 1000, gid: 1000 })
        .User,
    ).toBeUndefined();
  });

  it('gives only the declared env, HOME and the proxy variables', () => {
    expect(serverEnvironment(config)).toEqual([
      'TOKEN=x',
      'HOME=/tmp',
      'HTTP_PROXY=http://egress:3128',
      'HTTPS_PROXY=http://egress:3128',
      'http_proxy=http://egress:3128',
      'https_proxy=http://egress:3128',
      'NO_PROXY=localhost,127.0.0.1,::1',
      'no_proxy=localhost,127.0.0.1,::1',
    ]);
  });
});
