import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PolicyView } from '../ports/policy.js';
import { currentOwner, LABEL } from '../runtime/labels.js';
import type { SharedEngine } from '../runtime/runtime.js';
import { Lifecycle } from './lifecycle.js';
import { Sandboxes } from './sandboxes.js';
import { sandboxLabels } from './spec.js';

let dir: string;
let home: string;
let root: string;
const OWNER_ID = 'a'.repeat(32);
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rf-recheck-use-')));
  home = join(dir, 'home');
  root = join(dir, 'allowed');
  for (const d of [join(home, 'sandboxes'), join(root, 'sub'), join(dir, 'secrets')])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(home, 'sandboxes', 'owner-id'), `${OWNER_ID}\n`);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An engine holding one stopped sandbox container; records whether anything started it. */
function engineWith(
  name: string,
  labels: Record<string, string>,
  mounts: { Source: string; Target: string; ReadOnly: boolean }[] = [],
) {
  const started: string[] = [];
  const info = {
    Id: 'c1',
    Names: [`/ringfence-sandbox-${labels[LABEL.session]}-${name}`],
    State: 'exited',
    Labels: labels,
  };
  const docker = {
    listContainers: async () => [info],
    getContainer: (id: string) => ({
      inspect: async () => ({
        Name: info.Names[0],
        Config: { Labels: labels },
        HostConfig: { Mounts: mounts.map((m) => ({ Type: 'bind', ...m })) },
        Mounts: [],
      }),
      start: async () => void started.push(id),
    }),
    getImage: () => ({ inspect: async () => ({ Id: 'sha256:i', RepoDigests: [] }) }),
  } as unknown as Docker;
  const engine = {
    docker,
    session: 'now',
    engine: { kind: 'docker', mode: 'rootful', cgroupVersion: '2' },
  } as unknown as SharedEngine;
  return { engine, started };
}

const policy = (denyAny: boolean) =>
  ({
    imageRefusal: () => undefined,
    egressRefusal: (_server: string, rule: { mode: string }) =>
      denyAny && rule.mode === 'any' ? 'the policy lets server ringfence reach no addresses' : undefined,
  }) as unknown as PolicyView;

const request = (extra: Record<string, unknown>) => ({
  'ringfence.sandbox_image': 'img:1',
  'ringfence.sandbox_request': JSON.stringify({ mounts: [], command: ['sleep', 'infinity'], ...extra }),
});

describe('a sandbox is used or started again only as this gateway would make it now', () => {
  it("an earlier gateway's persistent sandbox with egress the policy now denies is not adopted; it may still be deleted", async () => {
    const labels = {
      ...sandboxLabels('keep', 'old'),
      [LABEL.pid]: '1',
      [LABEL.managed]: 'persistent',
      [LABEL.persistent]: '1',
      [LABEL.home]: OWNER_ID,
      ...request({ egress: 'any' }),
    };
    const { engine, started } = engineWith('keep', labels);
    const sandboxes = new Sandboxes({
      engine: async () => engine,
      home,
      policy: policy(true),
      images: ['img:1'],
      mountRoots: [],
      persistent: true,
    });
    await expect(sandboxes.find(engine, 'keep')).rejects.toMatchObject({ code: 'SANDBOX_EGRESS' });
    await expect(new Lifecycle(sandboxes).start('keep')).rejects.toThrow(/sandbox_delete/);
    expect(started).toEqual([]);
    await expect(sandboxes.find(engine, 'keep', 'remove')).resolves.toMatchObject({ Id: 'c1' });
    // Allowed again, it is adopted as before.
    const allowing = new Sandboxes({
      engine: async () => engine,
      home,
      policy: policy(false),
      images: ['img:1'],
      mountRoots: [],
      persistent: true,
    });
    await expect(allowing.find(engine, 'keep')).resolves.toMatchObject({ Id: 'c1' });
  });

  it("this gateway's stopped sandbox whose mounted folder became a link is not started", async () => {
    const { engine: probe } = engineWith('work', {});
    const labels = {
      ...sandboxLabels('work', probe.session),
      ...request({ mounts: [{ path: 'sub', mode: 'ro' }] }),
    };
    const { engine, started } = engineWith('work', labels, [
      { Source: join(root, 'sub'), Target: '/workspace/sub', ReadOnly: true },
    ]);
    const sandboxes = new Sandboxes({
      engine: async () => engine,
      home,
      policy: policy(false),
      images: ['img:1'],
      mountRoots: [{ path: root, writable: true }],
    });
    expect(currentOwner(engine.session).pid).toBe(process.pid);
    rmSync(join(root, 'sub'), { recursive: true });
    symlinkSync(join(dir, 'secrets'), join(root, 'sub'));
    await expect(new Lifecycle(sandboxes).start('work')).rejects.toMatchObject({ code: 'SANDBOX_MOUNT' });
    expect(started).toEqual([]);
  });
});
