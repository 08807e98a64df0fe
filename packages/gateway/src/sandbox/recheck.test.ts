import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LABEL } from '../runtime/labels.js';
import type { SharedEngine } from '../runtime/runtime.js';
import { type RecheckContext, recheck } from './recheck.js';

let dir: string;
let root: string;
let outside: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rf-recheck-')));
  root = join(dir, 'allowed');
  outside = join(dir, 'secrets');
  for (const d of [root, join(root, 'sub'), join(root, 'other'), outside]) mkdirSync(d);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const engine = { engine: { kind: 'docker', mode: 'rootful', cgroupVersion: '2' } } as unknown as SharedEngine;

function context(extra: Partial<RecheckContext> = {}): RecheckContext {
  return {
    images: ['img:1'],
    mountRoots: [{ path: root, writable: true }],
    homeDir: join(dir, 'home'),
    persistentAllowed: true,
    allowAddresses: [],
    policy: { egressRefusal: () => undefined },
    checkedImage: async () => undefined,
    ...extra,
  };
}

/** A sandbox's inspect as sandbox_create made it: its recorded request and its bind mounts. */
function inspected(
  request: Record<string, unknown>,
  binds: { source: string; target: string; readOnly: boolean }[],
  labels: Record<string, string> = {},
): Docker.ContainerInspectInfo {
  return {
    Name: '/ringfence-sandbox-sess-work',
    Config: {
      Labels: {
        [LABEL.sandbox]: 'work',
        'ringfence.sandbox_image': 'img:1',
        'ringfence.sandbox_request': JSON.stringify({
          mounts: [],
          command: ['sleep', 'infinity'],
          ...request,
        }),
        ...labels,
      },
    },
    HostConfig: {
      Mounts: binds.map((b) => ({ Type: 'bind', Source: b.source, Target: b.target, ReadOnly: b.readOnly })),
    },
    Mounts: [],
  } as unknown as Docker.ContainerInspectInfo;
}

const subMount = () =>
  inspected({ mounts: [{ path: 'sub', mode: 'ro' }] }, [
    { source: join(root, 'sub'), target: '/workspace/sub', readOnly: true },
  ]);

describe('recheck: a sandbox started again, rewound or adopted gets no more than a create would give now', () => {
  it('passes a sandbox whose mounts are still exactly what its request resolves to', async () => {
    await expect(recheck(context(), engine, subMount())).resolves.toBeUndefined();
  });

  it('refuses when a mounted folder was replaced by a link to a folder outside --allow-mount', async () => {
    rmSync(join(root, 'sub'), { recursive: true });
    symlinkSync(outside, join(root, 'sub'));
    await expect(recheck(context(), engine, subMount())).rejects.toMatchObject({ code: 'SANDBOX_MOUNT' });
  });

  it('refuses when a mounted folder was replaced by a link to another folder inside --allow-mount', async () => {
    rmSync(join(root, 'sub'), { recursive: true });
    symlinkSync(join(root, 'other'), join(root, 'sub'));
    await expect(recheck(context(), engine, subMount())).rejects.toMatchObject({ code: 'SANDBOX_MOUNT' });
  });

  it('refuses mounts --allow-mount no longer allows, and writing a read-only root no longer allows', async () => {
    await expect(recheck(context({ mountRoots: [] }), engine, subMount())).rejects.toMatchObject({
      code: 'SANDBOX_MOUNT',
    });
    const rw = inspected({ mounts: [{ path: 'sub', mode: 'rw' }] }, [
      { source: join(root, 'sub'), target: '/workspace/sub', readOnly: false },
    ]);
    await expect(recheck(context(), engine, rw)).resolves.toBeUndefined();
    await expect(
      recheck(context({ mountRoots: [{ path: root, writable: false }] }), engine, rw),
    ).rejects.toMatchObject({ code: 'SANDBOX_MOUNT' });
  });

  it('refuses a container with a bind its request does not name (labels forged or edited)', async () => {
    const extra = inspected({}, [{ source: outside, target: '/workspace/x', readOnly: false }]);
    await expect(recheck(context(), engine, extra)).rejects.toMatchObject({ code: 'SANDBOX_MOUNT' });
  });

  it('refuses a network the policy no longer grants, an image no longer allowed, persistence no longer allowed', async () => {
    const any = inspected({ egress: 'any' }, []);
    await expect(
      recheck(context({ policy: { egressRefusal: () => 'the policy denies egress "any"' } }), engine, any),
    ).rejects.toMatchObject({ code: 'SANDBOX_EGRESS' });
    await expect(recheck(context({ images: ['img:2'] }), engine, any)).rejects.toMatchObject({
      code: 'SANDBOX_IMAGE',
    });
    const lasting = inspected({}, [], { [LABEL.persistent]: '1' });
    await expect(recheck(context({ persistentAllowed: false }), engine, lasting)).rejects.toMatchObject({
      code: 'SANDBOX_PERSISTENT',
    });
  });

  it('refuses a sandbox that records no request, saying what to do', async () => {
    const info = inspected({}, []);
    delete (info.Config.Labels as Record<string, string>)['ringfence.sandbox_request'];
    await expect(recheck(context(), engine, info)).rejects.toThrow(/sandbox_delete/);
  });
});
