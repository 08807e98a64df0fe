import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { LABEL } from './labels.js';
import { hostIdentity, ownerIsAlive } from './process-identity.js';
import { sweepDeadGateways } from './sweep.js';

const labels = (pid: number, start: string, host: string) => ({
  [LABEL.managed]: '1',
  [LABEL.pid]: String(pid),
  [LABEL.pidStart]: start,
  [LABEL.host]: host,
});

function fakeEngine(containers: { Id: string; Labels: Record<string, string> }[]) {
  const removed: string[] = [];
  const docker = {
    listContainers: async () => containers.map((c) => ({ ...c, Names: [`/${c.Id}`] })),
    listNetworks: async () => [],
    getContainer: (id: string) => ({ remove: async () => void removed.push(id) }),
  } as unknown as Docker;
  return { docker, removed };
}

describe('sweepDeadGateways', () => {
  const host = 'aaaaaaaaaaaaaaaa';
  const alive = (pid: number) => (pid === 100 ? '5000' : undefined);

  it('removes objects of dead owners on this host only; never live owners, other hosts or unlabelled', async () => {
    const { docker, removed } = fakeEngine([
      { Id: 'dead', Labels: labels(200, '6000', host) },
      { Id: 'reused-pid', Labels: labels(100, '4999', host) },
      { Id: 'live', Labels: labels(100, '5000', host) },
      { Id: 'other-host', Labels: labels(200, '6000', 'bbbbbbbbbbbbbbbb') },
      { Id: 'no-host-label', Labels: { [LABEL.managed]: '1', [LABEL.pid]: '200', [LABEL.pidStart]: '6000' } },
      { Id: 'unmanaged', Labels: {} },
    ]);
    await sweepDeadGateways(docker, { host, probe: alive });
    expect(removed.sort()).toEqual(['dead', 'reused-pid']);
  });

  it("leaves a dead gateway's persistent sandbox (labelled ringfence.persistent=1), and only that", async () => {
    const { docker, removed } = fakeEngine([
      { Id: 'kept', Labels: { ...labels(200, '6000', host), [LABEL.persistent]: '1' } },
      // As persistent sandboxes are labelled: `ringfence.managed=persistent`, which no sweep selects.
      {
        Id: 'persistent',
        Labels: { ...labels(200, '6000', host), [LABEL.managed]: 'persistent', [LABEL.persistent]: '1' },
      },
      { Id: 'not-quite', Labels: { ...labels(200, '6000', host), [LABEL.persistent]: 'yes' } },
      { Id: 'dead', Labels: labels(200, '6000', host) },
    ]);
    await sweepDeadGateways(docker, { host, probe: alive });
    expect(removed.sort()).toEqual(['dead', 'not-quite']);
  });

  it('sweeps through a list that raced a container exiting (Podman 4.3: 500 "read /proc/<pid>/cgroup")', async () => {
    const { docker, removed } = fakeEngine([{ Id: 'dead', Labels: labels(200, '6000', host) }]);
    const list = docker.listContainers.bind(docker);
    let raced = 0;
    docker.listContainers = (async (options: Docker.ContainerListOptions) => {
      if (raced++ === 0) {
        throw Object.assign(
          new Error('(HTTP code 500) server error - read /proc/11488/cgroup: no such process'),
          {
            statusCode: 500,
          },
        );
      }
      return list(options);
    }) as typeof docker.listContainers;
    const report = await sweepDeadGateways(docker, { host, probe: alive });
    expect(report).toEqual({ containers: ['dead'], networks: [], errors: [] });
    expect(removed).toEqual(['dead']);
  });
});

describe('ownerIsAlive without /proc', () => {
  const noProc = () => undefined;
  it('falls back to whether the pid exists, erring towards alive', () => {
    expect(ownerIsAlive(123, '5000', noProc, () => true)).toBe(true);
    expect(ownerIsAlive(123, '5000', noProc, () => false)).toBe(false);
    expect(ownerIsAlive(process.pid, undefined)).toBe(true);
  });
});

describe('hostIdentity', () => {
  it('is stable and depends on the machine id', () => {
    const a = hostIdentity(() => 'machine-a');
    expect(hostIdentity(() => 'machine-a')).toBe(a);
    expect(hostIdentity(() => 'machine-b')).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
  });
});
