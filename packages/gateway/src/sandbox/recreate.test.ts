import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { sameSpecFrom } from './recreate.js';

describe('sameSpecFrom', () => {
  it('keeps every setting, network disabled included, with only the image changed and saved labels blanked', () => {
    const HostConfig = {
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Memory: 512,
      Tmpfs: { '/tmp': 'size=64m' },
      Mounts: [{ Type: 'bind', Source: '/a', Target: '/workspace/a', ReadOnly: true }],
    };
    const info = {
      Name: '/ringfence-sandbox-s-work',
      Config: {
        User: '65532:65532',
        Env: ['HOME=/tmp'],
        Cmd: ['node'],
        WorkingDir: '/work',
        NetworkDisabled: true,
        Labels: { 'ringfence.role': 'sandbox' },
      },
      HostConfig,
    } as unknown as Docker.ContainerInspectInfo;
    const spec = sameSpecFrom(info, 'sha256:new');
    expect(spec).toMatchObject({
      name: 'ringfence-sandbox-s-work',
      Image: 'sha256:new',
      User: '65532:65532',
      Env: ['HOME=/tmp'],
      Cmd: ['node'],
      WorkingDir: '/work',
      NetworkDisabled: true,
      OpenStdin: false,
      HostConfig,
    });
    expect(spec.Labels).toEqual({
      'ringfence.role': 'sandbox',
      'ringfence.checkpoint': '',
      'ringfence.checkpoint_label': '',
      'ringfence.snapshot': '',
      'ringfence.home': '',
    });
  });
});
