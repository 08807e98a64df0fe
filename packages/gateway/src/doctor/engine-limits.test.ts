import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../runtime/engine.js';
import {
  boundingSetAllowsRaise,
  checkEngineLimits,
  engineDefaultsVerdict,
  probeEngineDefaultLimits,
  recordedLimits,
} from './engine-limits.js';

const rootfulPodman: EngineInfo = { kind: 'podman', version: '4.3.1', apiVersion: '1.41', mode: 'rootful' };
const local = { options: { socketPath: '/run/podman/podman.sock' } };
const remote = { options: { host: 'engine.example', port: 2376 } };
const sandbox = { hard: { nofile: 20000, nproc: 96363 }, mayRaise: false };
// What rootful podman 4.3.1 records for a container that names no limits (seen by hand).
const podmanDefaults = { nofile: 1_048_576, nproc: 32768 };

describe('boundingSetAllowsRaise', () => {
  it('reads CAP_SYS_RESOURCE (bit 24) from the CapBnd line', () => {
    // A sandbox's set: every capability but CAP_SYS_RESOURCE.
    expect(boundingSetAllowsRaise('CapInh:\t0000000000000000\nCapBnd:\t000001fffeffffff\n')).toBe(false);
    expect(boundingSetAllowsRaise('CapBnd:\t000001ffffffffff\n')).toBe(true);
    expect(boundingSetAllowsRaise('Name:\tnode\n')).toBeUndefined();
  });
});

describe('recordedLimits', () => {
  it("reads Podman's RLIMIT_ names and Docker's short ones, and nothing when none are named", () => {
    expect(
      recordedLimits([
        { Name: 'RLIMIT_NOFILE', Hard: 1048576 },
        { Name: 'RLIMIT_NPROC', Hard: 32768 },
        { Name: 'RLIMIT_CORE', Hard: 0 },
      ]),
    ).toEqual(podmanDefaults);
    expect(recordedLimits([{ Name: 'nofile', Hard: 4096 }])).toEqual({ nofile: 4096 });
    expect(recordedLimits(null)).toEqual({});
  });
});

describe('engineDefaultsVerdict', () => {
  it('fails where the engine asks for more than the host grants and CAP_SYS_RESOURCE is withheld', () => {
    expect(engineDefaultsVerdict(podmanDefaults, sandbox.hard, false)).toEqual({
      verdict: 'fail',
      over: ['nofile 1048576 (this host: 20000)'],
    });
    expect(engineDefaultsVerdict(podmanDefaults, { nofile: 'unlimited', nproc: 4096 }, true)).toEqual({
      verdict: 'may-fail',
      over: ['nproc 32768 (this host: 4096)'],
    });
  });

  it('fits where the host grants as much, or the engine names none, and cannot tell without the host', () => {
    expect(
      engineDefaultsVerdict(podmanDefaults, { nofile: 1_048_576, nproc: 'unlimited' }, false).verdict,
    ).toBe('fit');
    expect(engineDefaultsVerdict({}, sandbox.hard, false).verdict).toBe('fit');
    expect(engineDefaultsVerdict(podmanDefaults, undefined, false).verdict).toBe('unknown');
  });
});

describe('checkEngineLimits', () => {
  it('says what ringfence gives, and that the engine would fail here, with the error people see', () => {
    const check = checkEngineLimits(
      rootfulPodman,
      local,
      { hard: { nofile: 2048, nproc: 96363 }, mayRaise: false },
      podmanDefaults,
    );
    expect(check.status).toBe('ok');
    expect(check.summary).toBe(
      "every container ringfence creates gets nofile 1024:2048, nproc 4096:4096, within this host's hard limits (nofile 2048, nproc 96363). " +
        'podman 4.3.1, rootful itself gives a container that names none nofile 1048576 (this host: 2048): such a container fails to start ("setrlimit …: operation not permitted") here, since this host withholds CAP_SYS_RESOURCE, which raising them needs. ' +
        "ringfence's containers are not affected; for your own, name limits (--ulimit) or set default_ulimits in containers.conf.",
    );
  });

  it('says nothing of the engine when its defaults fit, and why it cannot tell when it cannot', () => {
    const docker: EngineInfo = { kind: 'docker', version: '28.0.0', apiVersion: '1.47', mode: 'rootful' };
    const ours =
      "every container ringfence creates gets nofile 1024:4096, nproc 4096:4096, within this host's hard limits (nofile 20000, nproc 96363)";
    expect(checkEngineLimits(docker, local, sandbox, {}).summary).toBe(ours);
    expect(checkEngineLimits(docker, local, sandbox, { unknown: 'no image. Run: x' }).summary).toBe(
      `${ours}; whether the engine's own defaults fit is unknown: no image. Run: x`,
    );
  });

  it("uses the defaults for a remote engine, whose host's limits it cannot read", () => {
    expect(checkEngineLimits(rootfulPodman, remote, sandbox, podmanDefaults).summary).toBe(
      "every container ringfence creates gets nofile 1024:4096, nproc 4096:4096 (the defaults: this engine's host limits cannot be read from here)",
    );
  });
});

describe('probeEngineDefaultLimits', () => {
  it('creates a labelled container from the Node base image, reads its limits and removes it', async () => {
    const calls: string[] = [];
    const docker = {
      listImages: async () => [
        { Id: 'sha256:app', RepoTags: ['someone/app:1'] },
        { Id: 'sha256:base', RepoTags: ['ringfence/node-base:20.20.2-abc'] },
      ],
      createContainer: async (spec: Docker.ContainerCreateOptions) => {
        calls.push(
          `create ${spec.Image} ${spec.Labels?.['ringfence.managed']} ${spec.HostConfig?.NetworkMode}`,
        );
        return {
          inspect: async () => ({
            HostConfig: { Ulimits: [{ Name: 'RLIMIT_NOFILE', Soft: 1, Hard: 1048576 }] },
          }),
          remove: async () => {
            calls.push('remove');
          },
        };
      },
    } as unknown as Docker;
    expect(await probeEngineDefaultLimits(docker)).toEqual({ nofile: 1048576 });
    expect(calls).toEqual(['create sha256:base 1 none', 'remove']);
  });

  it('says what to run when there is no image to make it from', async () => {
    const docker = { listImages: async () => [] } as unknown as Docker;
    expect(await probeEngineDefaultLimits(docker)).toEqual({
      unknown: 'the Node base image is not built. Run: ringfence images build',
    });
  });
});
