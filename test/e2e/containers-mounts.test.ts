import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerServerConfig } from '@ringfence/gateway/config';
import { type ContainerRuntime, createContainerRuntime, type StartHooks } from '@ringfence/gateway/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  docker,
  execIn,
  listContainers,
  probeImage,
  removeTestContainers,
  uniqueName,
} from '../helpers/containers.js';
import { freshHome } from '../helpers/mcp.js';

/** The container `start` events the engine recorded for a session since `since` (seconds). */
async function startEvents(session: string, since: number): Promise<unknown[]> {
  const stream = (await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: { type: ['container'], event: ['start'], label: [`ringfence.session=${session}`] },
  })) as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);
}

/** What the server of `session` sees in /workspace/data (JSON), read from inside its container. */
async function listData(session: string): Promise<string> {
  const container = docker.getContainer(`ringfence-mcp-files-${session}`);
  const script = "console.log(JSON.stringify(require('fs').readdirSync('/workspace/data')))";
  return (await execIn(container, ['node', '-e', script])).trim();
}

/**
 * A folder swapped for a link between the moment a mount is resolved and the moment the engine
 * mounts it would mount the link's target. The runtime's test hooks make the swap happen exactly
 * at the worst moments, instead of racing for them.
 */
describe('a mount swapped for a link while its server starts', () => {
  let home: string;
  let workspace: string;
  let secret: string;
  let config: ContainerServerConfig;
  const runtimes: ContainerRuntime[] = [];

  const swapDataForLink = async () => {
    await rename(join(workspace, 'data'), join(workspace, `data-${uniqueName('old')}`));
    await symlink(secret, join(workspace, 'data'));
  };

  const runtime = async (session: string, testHooks?: StartHooks) => {
    const created = await createContainerRuntime({
      home,
      session,
      log: () => {},
      audit: { append: async () => 0 },
      workspaceRoots: [{ path: workspace, writable: true }],
      ...(testHooks ? { testHooks } : {}),
    });
    if (!created.available) throw new Error(created.reason);
    runtimes.push(created);
    return created;
  };

  beforeAll(async () => {
    home = await freshHome();
    workspace = join(home, '..', 'workspace');
    secret = join(home, '..', 'secret');
    await mkdir(secret, { recursive: true });
    await writeFile(join(secret, 'id_ed25519'), 'private key');
    const image = await probeImage();
    config = {
      name: 'files',
      transport: 'container',
      image,
      image_id: (await docker.getImage(image).inspect()).Id,
      egress: { mode: 'deny' },
      mounts: [{ path: 'data', mode: 'ro' }],
    };
  });

  const freshData = async () => {
    await rm(join(workspace, 'data'), { recursive: true, force: true });
    await mkdir(join(workspace, 'data'), { recursive: true });
    await writeFile(join(workspace, 'data', 'readme.txt'), 'hello');
  };

  afterAll(async () => {
    await removeTestContainers();
  });

  for (const moment of ['afterMountsResolved', 'afterCreate'] as const) {
    it(`swapped ${moment === 'afterCreate' ? 'after the container was created' : 'after it was resolved'}: refused, the container removed and never started`, async () => {
      await freshData();
      const session = uniqueName(`mnt-${moment === 'afterCreate' ? 'c' : 'r'}`).toLowerCase();
      const since = Math.floor(Date.now() / 1000) - 1;
      const server = (await runtime(session, { [moment]: swapDataForLink })).launch(config);
      let seen = '';
      const failure = await server.start().then(
        async () => {
          // Started anyway: what the server now sees at /workspace/data, for the failure message.
          seen = await listData(session);
          return undefined;
        },
        (error: unknown) => error as { code?: string; message: string },
      );
      await server.stop();
      // The hook did swap the folder for a link to the secret folder.
      expect(await readlink(join(workspace, 'data'))).toBe(secret);
      expect(failure?.code, `started; /workspace/data holds ${seen}`).toBe('MOUNT_CHANGED');
      expect(failure?.message).toMatch(
        /Mount "data" changed while its server was starting \(.*data became a symbolic link\); the server was not started/,
      );
      const left = await listContainers(docker, {
        all: true,
        filters: { label: [`ringfence.session=${session}`] },
      });
      expect(left).toEqual([]);
      expect(await startEvents(session, since)).toEqual([]);
    });
  }

  it('not swapped: starts, with the folder it resolved mounted', async () => {
    await freshData();
    const session = uniqueName('mnt-ok').toLowerCase();
    const server = (await runtime(session)).launch(config);
    await server.start();
    try {
      expect(JSON.parse(await listData(session))).toEqual(['readme.txt']);
    } finally {
      await server.stop();
    }
  });
});
