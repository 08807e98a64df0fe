import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { buildContextImage } from '@ringfence/gateway/images';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  docker,
  nodeBase,
  refusalFor,
  removeTestContainers,
  TEST_LABEL,
  testLabels,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';

// node-base has node and nothing else: the main process is node itself.
const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
const write = (path: string, text: string) => [
  'node',
  '-e',
  `require('fs').writeFileSync(${JSON.stringify(path)}, ${JSON.stringify(text)})`,
];
const read = (path: string) => [
  'node',
  '-e',
  `const fs = require('fs'); process.stdout.write(fs.existsSync(${JSON.stringify(path)}) ? fs.readFileSync(${JSON.stringify(path)}, 'utf8') : '<none>')`,
];
// Where the engine cannot contain an egress allowlist (docs/runtimes.md), named hosts are refused.
const ALLOW_REFUSED = (await refusalFor('allow')) !== undefined;
// biome-ignore lint/suspicious/noExplicitAny: a tool's JSON result, read field by field
const json = (result: unknown) => JSON.parse(firstText(result)) as Record<string, any>;
const field = (object: object, key: string) => (object as Record<string, unknown>)[key];

/** node-base with /work writable by the sandbox user: a workspace whose files a commit keeps. */
async function workspaceImage(): Promise<string> {
  const base = await nodeBase();
  const built = await buildContextImage(docker, {
    repository: 'ringfence-test/workspace',
    context: {
      dockerfile: `FROM ${base}\nCOPY --chown=65532:65532 work /work\nWORKDIR /work\n`,
      files: [
        { path: 'work', mode: 0o755, source: { directory: true } },
        { path: 'work/.keep', mode: 0o644, source: { content: Buffer.from('') } },
      ],
    },
    labels: { [TEST_LABEL]: '1' },
  });
  return built.ref;
}

/** An image of the person's own, committed from a stopped container, carrying `labels`. */
async function personsImage(image: string, ref: string, labels: Record<string, string>): Promise<string> {
  const container = await docker.createContainer({ Image: image, Cmd: ['true'], Labels: testLabels() });
  const [repo, tag] = ref.split(':');
  await container.commit({ _query: { container: container.id, repo, tag }, _body: { Labels: labels } });
  await container.remove({ force: true });
  return ref;
}

const imageExists = async (ref: string) =>
  docker
    .getImage(ref)
    .inspect()
    .then(
      () => true,
      () => false,
    );

describe('save and undo: checkpoints, rewind, snapshots through a real client', () => {
  let home: string;
  let policyDir: string;
  let image: string;
  let served: ServedClient;
  const session = uniqueName('save');
  const env = () => ({ RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir });
  const call = (name: string, args: Record<string, unknown>) =>
    served.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const container = (name: string) => docker.getContainer(`ringfence-sandbox-${session}-${name}`);
  /** Images the person made with ringfence's labels (and names), which must never be touched. */
  const forged = {
    checkpoint: `ringfence-saved/checkpoint:${session}-work-deadbeef`,
    snapshot: `ringfence-saved/snapshot:forged-${session}`,
  };
  let checkpoint = '';

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    policyDir = await mkdtemp(join(dir, 'etc-'));
    image = await workspaceImage();
    const org = await makeOrg(join(dir, 'org'));
    const policy = await signPolicy(
      org,
      policyDocument({
        default_egress: 'deny',
        mcp: [{ server: 'ringfence', egress_allow: ['example.invalid'] }],
      }),
      'save-policy',
    );
    await install(policy, org, env());
    // A checkpoint of "work" in this very session by every label but the owner's pid and host;
    // a snapshot of this home's by every label but its home.
    const labels = {
      ...testLabels(),
      'ringfence.managed': '1',
      'ringfence.server': 'ringfence',
      'ringfence.session': session,
      'ringfence.sandbox': 'work',
    };
    await personsImage(image, forged.checkpoint, {
      ...labels,
      'ringfence.role': 'checkpoint',
      'ringfence.checkpoint': 'deadbeef',
      'ringfence.pid': '1',
    });
    await personsImage(image, forged.snapshot, {
      ...labels,
      'ringfence.role': 'snapshot',
      'ringfence.snapshot': 'forged',
      'ringfence.home': 'not-this-home',
    });
    served = await connectStdio(
      home,
      env(),
      {},
      {
        args: [
          '--session',
          session,
          '--sandbox-tools',
          '--sandbox-image',
          image,
          '--sandbox-save-cap',
          '40m',
        ],
      },
    );
  });

  afterAll(async () => {
    await served?.close();
    for (const ref of Object.values(forged))
      await docker
        .getImage(ref)
        .remove({ force: true })
        .catch(() => {});
    const left = await docker.listImages({ filters: { label: [`ringfence.session=${session}`] } });
    for (const i of left)
      await docker
        .getImage(i.Id)
        .remove({ force: true })
        .catch(() => {});
    await removeTestContainers();
  });

  it('lists the save tools, each saying what it touches', async () => {
    const { tools } = await served.client.listTools();
    const names = [
      'sandbox_checkpoint',
      'sandbox_checkpoint_list',
      'sandbox_rewind',
      'sandbox_snapshot',
      'snapshot_list',
      'snapshot_restore',
      'snapshot_remove',
    ];
    const own = tools.filter((t) => names.includes(t.name));
    expect(own).toHaveLength(names.length);
    for (const tool of own) expect(tool.description).toMatch(/Touches/);
  });

  it('checkpoint, change, rewind: the file is back, /tmp is not saved, and the network is still none', async () => {
    expect(
      json(await call('sandbox_create', { name: 'work', image, command: KEEP_ALIVE })).created,
    ).toMatchObject({
      network: 'none',
    });
    expect(
      json(await call('sandbox_run', { name: 'work', command: write('/work/note.txt', 'v1') })).exit_code,
    ).toBe(0);
    json(await call('sandbox_run', { name: 'work', command: write('/tmp/scratch.txt', 'tmpfs') }));

    const saved = json(
      await call('sandbox_checkpoint', { name: 'work', label: 'before the change\nUSER root' }),
    );
    checkpoint = saved.checkpointed.checkpoint;
    expect(checkpoint).toMatch(/^[0-9a-f]{8}$/);
    expect(saved.checkpointed).toMatchObject({ sandbox: 'work', label: 'before the change\nUSER root' });
    expect(saved.checkpointed.size_bytes).toBeGreaterThan(0);
    expect(saved.checkpointed.image).toMatch(/^ringfence-saved\/checkpoint:/);
    // The note is a label value only: the image's user is the sandbox's, not an instruction's.
    const committed = await docker.getImage(saved.checkpointed.image).inspect();
    expect(committed.Config.User).toBe('65532:65532');
    expect(committed.Config.Labels).toMatchObject({
      'ringfence.role': 'checkpoint',
      'ringfence.sandbox': 'work',
      'ringfence.session': session,
    });

    json(await call('sandbox_run', { name: 'work', command: write('/work/note.txt', 'v2') }));
    json(await call('sandbox_run', { name: 'work', command: write('/work/extra.txt', 'later') }));
    const before = await container('work').inspect();

    const listed = json(await call('sandbox_checkpoint_list', { name: 'work' }));
    // The person's image forging a checkpoint of "work" in this session is not ours.
    expect(listed.checkpoints.map((c: { checkpoint: string }) => c.checkpoint)).toEqual([checkpoint]);

    const rewound = json(await call('sandbox_rewind', { name: 'work', checkpoint }));
    expect(rewound.rewound).toMatchObject({ sandbox: 'work', rewound_to: checkpoint });
    expect(json(await call('sandbox_run', { name: 'work', command: read('/work/note.txt') })).stdout).toBe(
      'v1',
    );
    expect(json(await call('sandbox_run', { name: 'work', command: read('/work/extra.txt') })).stdout).toBe(
      '<none>',
    );
    expect(json(await call('sandbox_run', { name: 'work', command: read('/tmp/scratch.txt') })).stdout).toBe(
      '<none>',
    );

    // The same container settings, the same (absent) network.
    const after = await container('work').inspect();
    expect(after.Id).not.toBe(before.Id);
    expect(after.Image).toBe(committed.Id);
    expect(after.HostConfig.NetworkMode).toBe('none');
    expect(Object.keys(after.NetworkSettings.Networks)).toEqual(Object.keys(before.NetworkSettings.Networks));
    for (const key of [
      'CapDrop',
      'SecurityOpt',
      'Memory',
      'PidsLimit',
      'NanoCpus',
      'Ulimits',
      'Tmpfs',
      'ReadonlyRootfs',
    ])
      expect(field(after.HostConfig, key), key).toEqual(field(before.HostConfig, key));
    for (const key of ['User', 'Env', 'Cmd', 'Entrypoint', 'WorkingDir', 'NetworkDisabled'])
      expect(field(after.Config, key), key).toEqual(field(before.Config, key));
    expect(field(after.Config, 'NetworkDisabled')).toBe(true);
    // Its labels are what they were; the checkpoint's own are blanked, not inherited.
    const extra = Object.fromEntries(
      Object.entries(after.Config.Labels).filter(([key]) => !(key in before.Config.Labels)),
    );
    expect(after.Config.Labels).toMatchObject(before.Config.Labels);
    expect(Object.values(extra).every((value) => value === '')).toBe(true);
    const interfaces = json(
      await call('sandbox_run', {
        name: 'work',
        command: ['node', '-e', "console.log(Object.keys(require('os').networkInterfaces()).join(','))"],
      }),
    );
    expect(interfaces.stdout).toBe('lo\n');
    expect(json(await call('sandbox_list', {})).sandboxes).toEqual([
      expect.objectContaining({ name: 'work', network: 'none', state: 'running' }),
    ]);
  });

  it.skipIf(ALLOW_REFUSED)(
    'a rewind behind the egress sidecar stays on its internal network, with the same proxy, and nothing wider',
    async () => {
      json(
        await call('sandbox_create', { name: 'net', image, hosts: ['example.invalid'], command: KEEP_ALIVE }),
      );
      const before = await container('net').inspect();
      const cp = json(await call('sandbox_checkpoint', { name: 'net' })).checkpointed.checkpoint;
      json(await call('sandbox_rewind', { name: 'net', checkpoint: cp }));
      const after = await container('net').inspect();
      expect(after.HostConfig.NetworkMode).toBe(before.HostConfig.NetworkMode);
      expect(Object.keys(after.NetworkSettings.Networks)).toEqual([before.HostConfig.NetworkMode]);
      const inner = await docker.getNetwork(before.HostConfig.NetworkMode!).inspect();
      expect(inner.Internal).toBe(true);
      expect(after.Config.Env).toEqual(before.Config.Env);
      expect(after.HostConfig.Dns).toEqual(before.HostConfig.Dns);
      expect(after.HostConfig.ExtraHosts).toEqual(before.HostConfig.ExtraHosts);
      const deleted = json(await call('sandbox_delete', { name: 'net' }));
      expect(deleted.deleted.images).toHaveLength(1);
      expect(
        await docker.listNetworks({
          filters: { label: ['ringfence.sandbox=net', `ringfence.session=${session}`] },
        }),
      ).toEqual([]);
    },
  );

  it("refuses a checkpoint that is not this sandbox's own, and the person's forged one", async () => {
    for (const id of ['deadbeef', '00000000']) {
      const refused = await call('sandbox_rewind', { name: 'work', checkpoint: id });
      expect(refused.isError).toBe(true);
      expect(firstText(refused)).toMatch(/has no checkpoint/);
    }
    expect(await imageExists(forged.checkpoint)).toBe(true);
  });

  it('snapshot, restore as a new sandbox (checked as a create), remove', async () => {
    const snap = json(await call('sandbox_snapshot', { name: 'work', snapshot_name: 'keep' }));
    expect(snap.snapshotted).toMatchObject({ snapshot: 'keep', sandbox: 'work' });
    expect(snap.snapshotted.image).toMatch(/^ringfence-saved\/snapshot:[0-9a-f]{12}-keep$/);
    const again = await call('sandbox_snapshot', { name: 'work', snapshot_name: 'keep' });
    expect(firstText(again)).toMatch(/already exists/);

    const list = json(await call('snapshot_list', {}));
    expect(list.snapshots.map((s: { snapshot: string }) => s.snapshot)).toEqual(['keep']);
    expect(list.cap.cap_bytes).toBe(40 * 1024 * 1024);

    // A restore is a create: the policy's network ceiling and the mount rules apply.
    const open = await call('snapshot_restore', { snapshot: 'keep', name: 'copy', egress: 'any' });
    expect(firstText(open)).toMatch(/ringfence refused snapshot_restore: .*policy/);
    const mounted = await call('snapshot_restore', {
      snapshot: 'keep',
      name: 'copy',
      mounts: [{ path: '/etc' }],
    });
    expect(firstText(mounted)).toMatch(/nothing may be mounted/);
    expect(firstText(await call('snapshot_restore', { snapshot: 'forged', name: 'copy' }))).toMatch(
      /no snapshot "forged"/,
    );

    const restored = json(await call('snapshot_restore', { snapshot: 'keep', name: 'copy' }));
    expect(restored.restored).toMatchObject({
      snapshot: 'keep',
      name: 'copy',
      network: 'none',
      state: 'running',
    });
    expect(json(await call('sandbox_run', { name: 'copy', command: read('/work/note.txt') })).stdout).toBe(
      'v1',
    );
    const copy = await container('copy').inspect();
    expect(copy.HostConfig.NetworkMode).toBe('none');
    expect(copy.Config.User).toBe('65532:65532');

    const inUse = await call('snapshot_remove', { snapshot: 'keep' });
    expect(firstText(inUse)).toMatch(/in use by .*copy.*delete that sandbox first/);
    json(await call('sandbox_delete', { name: 'copy' }));
    const removed = json(await call('snapshot_remove', { snapshot: 'keep' }));
    expect(removed).toMatchObject({ removed: 'keep' });
    expect(await imageExists(snap.snapshotted.image)).toBe(false);

    expect(firstText(await call('snapshot_remove', { snapshot: 'forged' }))).toMatch(/no snapshot "forged"/);
    expect(await imageExists(forged.snapshot)).toBe(true);
  });

  it('refuses a save beyond the cap, keeping nothing of it, and says what to do', async () => {
    const big = [
      'node',
      '-e',
      "require('fs').writeFileSync('/work/big.bin', Buffer.alloc(60 * 1024 * 1024, 7))",
    ];
    expect(json(await call('sandbox_run', { name: 'work', command: big })).exit_code).toBe(0);
    const refused = await call('sandbox_checkpoint', { name: 'work' });
    expect(refused.isError).toBe(true);
    expect(firstText(refused)).toMatch(
      /was not kept: .* of the 40\.0 MiB .*--sandbox-save-cap.*snapshot_remove/,
    );
    const listed = json(await call('sandbox_checkpoint_list', { name: 'work' }));
    expect(listed.checkpoints.map((c: { checkpoint: string }) => c.checkpoint)).toEqual([checkpoint]);
    const saved = await docker.listImages({
      filters: { label: ['ringfence.role=checkpoint', `ringfence.session=${session}`] },
    });
    expect(saved.flatMap((i) => i.RepoTags)).toEqual(
      expect.arrayContaining([expect.stringContaining(`-work-${checkpoint}`)]),
    );
    expect(
      saved.filter((i) => i.RepoTags?.some((t) => !t.includes(checkpoint) && !t.includes('deadbeef'))),
    ).toEqual([]);
  });

  it('delete leaves no container, image or network of the sandbox; the person’s images are untouched', async () => {
    const deleted = json(await call('sandbox_delete', { name: 'work' }));
    expect(deleted.deleted.images).toEqual([expect.stringContaining(`-work-${checkpoint}`)]);
    expect(
      await docker.listContainers({ all: true, filters: { label: [`ringfence.session=${session}`] } }),
    ).toEqual([]);
    expect(await docker.listNetworks({ filters: { label: [`ringfence.session=${session}`] } })).toEqual([]);
    const images = await docker.listImages({ filters: { label: [`ringfence.session=${session}`] } });
    expect(images.flatMap((i) => i.RepoTags ?? []).sort()).toEqual(
      [forged.checkpoint, forged.snapshot].sort(),
    );
  });

  it('checkpoints go with the gateway; a snapshot stays until removed', async () => {
    json(await call('sandbox_create', { name: 'left', image, command: KEEP_ALIVE }));
    const cp = json(await call('sandbox_checkpoint', { name: 'left' })).checkpointed;
    const snap = json(
      await call('sandbox_snapshot', { name: 'left', snapshot_name: `stays-${session}`.slice(0, 32) }),
    );
    await served.close();
    const deadline = Date.now() + 30_000;
    while ((await imageExists(cp.image)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    expect(await imageExists(cp.image)).toBe(false);
    expect(await imageExists(snap.snapshotted.image)).toBe(true);
    expect(await imageExists(forged.checkpoint)).toBe(true);
    expect(await imageExists(forged.snapshot)).toBe(true);
    await docker.getImage(snap.snapshotted.image).remove();
  });
});
