import { describe, expect, it } from 'vitest';
import { serverContainerSpec } from '../runtime/container-spec.js';
import { currentOwner, ownedBy } from '../runtime/labels.js';
import { containerProcessLimits } from '../runtime/process-limits.js';
import { parseCreate } from './args.js';
import { Sandboxes } from './sandboxes.js';
import { egressRuleOf, SANDBOX_USER, sandboxContainerSpec, unitConfig } from './spec.js';

const processLimits = containerProcessLimits({ nofile: 2048, nproc: 512 });
const imageId = `sha256:${'b'.repeat(64)}`;
const mount = {
  requested: 'out',
  source: '/home/me/ws/out',
  target: '/workspace/out',
  readOnly: false,
  identity: { dev: 1n, ino: 2n },
};
const create = (extra: Record<string, unknown> = {}) =>
  parseCreate({ name: 'work', image: 'img:1', ...extra });
const base = { session: 'sess', network: 'none', mounts: [], processLimits, user: { uid: 1000, gid: 1000 } };

describe('sandboxContainerSpec', () => {
  it("hardens exactly as a contained server's spec does, with a writable root and no stdin", () => {
    const request = create();
    const spec = sandboxContainerSpec(request, imageId, base);
    const server = serverContainerSpec(unitConfig(request, imageId), base);
    const { ReadonlyRootfs, LogConfig, ...hardening } = spec.HostConfig!;
    const { ReadonlyRootfs: serverRootfs, LogConfig: serverLog, ...serverHardening } = server.HostConfig!;
    expect(hardening).toEqual(serverHardening);
    // A server's output is never logged; a sandbox's main process's is, bounded on disk.
    expect(serverLog).toMatchObject({ Type: 'none' });
    expect(LogConfig).toEqual({ Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '2' } });
    expect(ReadonlyRootfs).toBe(false);
    expect(serverRootfs).toBe(true);
    expect(spec.HostConfig).toMatchObject({
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      NetworkMode: 'none',
    });
    expect(spec.HostConfig?.Memory).toBeGreaterThan(0);
    expect(spec.HostConfig?.PidsLimit).toBeGreaterThan(0);
    expect(spec.HostConfig?.NanoCpus).toBeGreaterThan(0);
    expect(spec.HostConfig?.Ulimits).toEqual(server.HostConfig?.Ulimits);
    expect(spec.NetworkDisabled).toBe(true);
    expect(spec.OpenStdin).toBe(false);
    expect(spec.Image).toBe(imageId);
    expect(spec.Cmd).toEqual(['sleep', 'infinity']);
    // Never the engine socket, nor any bind but the resolved mounts.
    expect(JSON.stringify(spec)).not.toMatch(/docker\.sock|podman\.sock/);
    expect(spec.HostConfig?.Mounts).toEqual([]);
    expect(spec.HostConfig?.Binds).toBeUndefined();
  });

  it('never runs as root: the image user is replaced, and a root gateway does not lend its uid', () => {
    expect(sandboxContainerSpec(create(), imageId, base).User).toBe(SANDBOX_USER);
    const asRoot = sandboxContainerSpec(create(), imageId, {
      ...base,
      mounts: [mount],
      user: { uid: 0, gid: 0 },
    });
    expect(asRoot.User).toBe(SANDBOX_USER);
    // A writable mount: the person's own uid, so files written there are theirs.
    expect(sandboxContainerSpec(create(), imageId, { ...base, mounts: [mount] }).User).toBe('1000:1000');
  });

  it('is labelled as a sandbox of this gateway, and named apart from server containers', () => {
    const spec = sandboxContainerSpec(create(), imageId, base);
    expect(spec.Labels).toMatchObject({
      'ringfence.managed': '1',
      'ringfence.sandbox': 'work',
      'ringfence.role': 'sandbox',
      'ringfence.server': 'ringfence',
      'ringfence.session': 'sess',
      'ringfence.pid': String(process.pid),
    });
    expect(spec.name).toBe('ringfence-sandbox-sess-work');
    // Exactly the owner labels the reaper (at the gateway's end) and the sweep (after its death) select by.
    expect(ownedBy(spec.Labels, currentOwner('sess'))).toBe(true);
    expect(ownedBy(spec.Labels, currentOwner('another'))).toBe(false);
  });

  it('with named hosts: no resolver, the proxy by address, on the internal network only', () => {
    const spec = sandboxContainerSpec(create({ hosts: ['registry.npmjs.org'] }), imageId, {
      ...base,
      network: 'inner',
      proxyAddress: '10.9.8.7',
    });
    expect(spec.NetworkDisabled).toBe(false);
    expect(spec.HostConfig).toMatchObject({ NetworkMode: 'inner', Dns: ['127.0.0.1'] });
    expect(spec.Env).toContain('HTTPS_PROXY=http://10.9.8.7:3128');
  });
});

describe('egressRuleOf', () => {
  const ranges = ['172.16.0.0/12'];
  it("the person's address ranges widen named hosts only, never no network or an open one", () => {
    expect(egressRuleOf(create({ hosts: ['db.internal:5432'] }), ranges)).toEqual({
      mode: 'allow',
      hosts: ['db.internal:5432'],
      addresses: ranges,
    });
    expect(egressRuleOf(create(), ranges)).toEqual({ mode: 'deny' });
    expect(egressRuleOf(create({ egress: 'any' }), ranges)).toEqual({ mode: 'any' });
    // The sidecar gets them through the same unit config a server's does.
    expect(unitConfig(create({ hosts: ['db.internal'] }), imageId, ranges).egress.addresses).toEqual(ranges);
  });

  it('refuses a malformed range when the gateway starts, naming the flag', () => {
    const policy = {} as ConstructorParameters<typeof Sandboxes>[0]['policy'];
    const options = {
      engine: async () => ({ unavailable: 'none' }),
      home: '/h',
      policy,
      images: [],
      mountRoots: [],
    };
    expect(() => new Sandboxes({ ...options, allowAddresses: ['10.0.0.0/33'] })).toThrow(
      /--sandbox-allow-address "10\.0\.0\.0\/33" is refused/,
    );
    expect(new Sandboxes({ ...options, allowAddresses: ['10.0.0.0/8'] }).allowAddresses).toEqual([
      '10.0.0.0/8',
    ]);
  });
});
