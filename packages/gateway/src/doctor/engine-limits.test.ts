import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../runtime/engine.js';
import { boundingSetAllowsRaise, checkEngineLimits, engineDefaultsVerdict } from './engine-limits.js';

const rootfulPodman: EngineInfo = { kind: 'podman', version: '4.3.1', apiVersion: '1.41', mode: 'rootful' };
const local = { options: { socketPath: '/run/podman/podman.sock' } };
const remote = { options: { host: 'engine.example', port: 2376 } };
const sandbox = { hard: { nofile: 20000, nproc: 96363 }, mayRaise: false };

describe('boundingSetAllowsRaise', () => {
  it('reads CAP_SYS_RESOURCE (bit 24) from the CapBnd line', () => {
    // A sandbox's set: every capability but CAP_SYS_RESOURCE.
    expect(boundingSetAllowsRaise('CapInh:\t0000000000000000\nCapBnd:\t000001fffeffffff\n')).toBe(false);
    expect(boundingSetAllowsRaise('CapBnd:\t000001ffffffffff\n')).toBe(true);
    expect(boundingSetAllowsRaise('Name:\tnode\n')).toBeUndefined();
  });
});

describe('engineDefaultsVerdict', () => {
  it("rootful podman's 1048576 fails on a host with lower hard limits that withholds CAP_SYS_RESOURCE", () => {
    expect(engineDefaultsVerdict(rootfulPodman, sandbox.hard, false)).toEqual({
      verdict: 'fail',
      over: ['nofile 20000', 'nproc 96363'],
    });
    expect(engineDefaultsVerdict({ kind: 'podman' }, { nofile: 'unlimited', nproc: 4096 }, true)).toEqual({
      verdict: 'may-fail',
      over: ['nproc 4096'],
    });
  });

  it('fits where the host grants as much, and on engines that never ask for more than they have', () => {
    const high = { nofile: 1_048_576, nproc: 'unlimited' } as const;
    expect(engineDefaultsVerdict(rootfulPodman, high, false).verdict).toBe('fit');
    expect(engineDefaultsVerdict({ kind: 'docker', mode: 'rootful' }, sandbox.hard, false).verdict).toBe(
      'fit',
    );
    expect(engineDefaultsVerdict({ kind: 'podman', mode: 'rootless' }, sandbox.hard, false).verdict).toBe(
      'fit',
    );
    expect(engineDefaultsVerdict(rootfulPodman, undefined, false).verdict).toBe('unknown');
  });
});

describe('checkEngineLimits', () => {
  it('says what ringfence gives, and that the engine would fail here, with the error people see', () => {
    const check = checkEngineLimits(rootfulPodman, local, {
      hard: { nofile: 2048, nproc: 96363 },
      mayRaise: false,
    });
    expect(check.status).toBe('ok');
    expect(check.summary).toMatch(
      /^every container ringfence creates gets nofile 1024:2048, nproc 4096:4096, within this host's hard limits \(nofile 2048, nproc 96363\)\. podman 4\.3\.1, rootful itself asks for 1048576 .*above this host's nofile 2048, nproc 96363: such a container fails to start \("setrlimit …: operation not permitted"\) here, since this host withholds CAP_SYS_RESOURCE/,
    );
    expect(check.summary).toContain('default_ulimits in containers.conf');
  });

  it('says nothing of the engine when its defaults fit', () => {
    const docker: EngineInfo = { kind: 'docker', version: '28.0.0', apiVersion: '1.47', mode: 'rootful' };
    expect(checkEngineLimits(docker, local, sandbox).summary).toBe(
      "every container ringfence creates gets nofile 1024:4096, nproc 4096:4096, within this host's hard limits (nofile 20000, nproc 96363)",
    );
  });

  it("uses the defaults for a remote engine, whose host's limits it cannot read", () => {
    expect(checkEngineLimits(rootfulPodman, remote, sandbox).summary).toBe(
      "every container ringfence creates gets nofile 1024:4096, nproc 4096:4096 (the defaults: this engine's host limits cannot be read from here)",
    );
  });
});
