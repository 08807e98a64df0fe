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

function fakeEngine(
  containers: { Id: string; Labels: Record<string, string> }[],
  images: { Id: string; Labels: Record<string, string>; RepoTags?: string[] }[] = [],
) {
  const removed: string[] = [];
  const docker = {
    listContainers: async () => containers.map((c) => ({ ...c, Names: [`/${c.Id}`] })),
    listNetworks: async () => [],
    listImages: async () => images,
    getContainer: (id: string) => ({ remove: async () => void removed.push(id) }),
    getImage: (reference: string) => ({
      remove: async () => {
        if (reference === 'ringfence-gone:1')
          throw Object.assign(new Error('no such image'), { statusCode: 404 });
        removed.push(reference);
      },
    }),
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

  it("removes a dead owner's committed images (a sandbox fork's) by their tags; an image already gone is no failure", async () => {
    const { docker, removed } = fakeEngine(
      [],
      [
        {
          Id: 'sha256:d',
          Labels: labels(200, '6000', host),
          RepoTags: ['ringfence-fork:a', 'ringfence-fork:b'],
        },
        { Id: 'sha256:untagged', Labels: labels(200, '6000', host), RepoTags: ['<none>:<none>'] },
        { Id: 'sha256:g', Labels: labels(200, '6000', host), RepoTags: ['ringfence-gone:1'] },
        // Built FROM a fork by the person: the labels are inherited, the repository is theirs.
        { Id: 'sha256:built-on', Labels: labels(200, '6000', host), RepoTags: ['my-app:1'] },
        { Id: 'sha256:live', Labels: labels(100, '5000', host), RepoTags: ['live:1'] },
        { Id: 'sha256:person', Labels: {}, RepoTags: ['mine:1'] },
      ],
    );
    const report = await sweepDeadGateways(docker, { host, probe: alive });
    expect(removed).toEqual(['ringfence-fork:a', 'ringfence-fork:b', 'sha256:untagged']);
    expect(report.images).toEqual(removed);
    expect(report.errors).toEqual([]);
  });

  it("removes dead owners' sandbox checkpoints by their ringfence-saved tag; never a snapshot, a live owner's or another role", async () => {
    const role = (r: string) => ({ [LABEL.role]: r });
    const { docker, removed } = fakeEngine(
      [],
      [
        {
          Id: 'i1',
          Labels: { ...labels(200, '6000', host), ...role('checkpoint') },
          RepoTags: ['ringfence-saved/checkpoint:s-a-1', 'mine:latest'],
        },
        { Id: 'i2', Labels: { ...labels(200, '6000', host), ...role('checkpoint') } },
        {
          Id: 'live',
          Labels: { ...labels(100, '5000', host), ...role('checkpoint') },
          RepoTags: ['ringfence-saved/checkpoint:s-a-2'],
        },
        // A snapshot's pid labels are blank: a dead owner by the labels, but never a gateway's to sweep.
        {
          Id: 'snap',
          Labels: { ...labels(Number.NaN, '', host), ...role('snapshot') },
          RepoTags: ['ringfence-saved/snapshot:h-x'],
        },
        {
          Id: 'server-image',
          Labels: { ...labels(200, '6000', host), ...role('server') },
          RepoTags: ['x:1'],
        },
      ],
    );
    const report = await sweepDeadGateways(docker, { host, probe: alive });
    expect(removed.sort()).toEqual(['i2', 'ringfence-saved/checkpoint:s-a-1']);
    expect(report.images.sort()).toEqual(['i2', 'ringfence-saved/checkpoint:s-a-1']);
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
    expect(report).toEqual({ containers: ['dead'], networks: [], images: [], errors: [] });
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

describe('removeManagedImages', () => {
  it('leaves an image a container still runs from (409), without failing, and removes the rest', async () => {
    const { removeManagedImages } = await import('./owned-images.js');
    const removed: string[] = [];
    const docker = {
      listImages: async () => [
        { Id: 'sha256:used', Labels: {}, RepoTags: ['ringfence-saved/checkpoint:used'] },
        { Id: 'sha256:free', Labels: {}, RepoTags: ['ringfence-saved/checkpoint:free'] },
      ],
      getImage: (reference: string) => ({
        remove: async () => {
          if (reference.endsWith(':used'))
            throw Object.assign(new Error('conflict: image is being used by running container'), {
              statusCode: 409,
            });
          removed.push(reference);
        },
      }),
    } as unknown as Docker;
    const report = await removeManagedImages(docker, () => true, []);
    expect(report).toEqual({ images: ['ringfence-saved/checkpoint:free'], errors: [] });
    expect(removed).toEqual(['ringfence-saved/checkpoint:free']);
  });
});
