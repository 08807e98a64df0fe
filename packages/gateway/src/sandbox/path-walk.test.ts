import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { chunked, tarOf } from './__fixtures__/tar.js';
import { exploreIn, readFileIn } from './files.js';
import { checkWayTo } from './path-walk.js';
import type { Sandboxes } from './sandboxes.js';

type Node = { uid: number; gid: number; mode: number; link?: string; file?: boolean };
const user = { uid: 65532, gid: 65532 };
const open = { uid: 0, gid: 0, mode: 0o755 };

/**
 * A container's files as the engine's archive shows them: the archive of a path is its own entry
 * (a link not followed), after following links on the way (within the container), as Docker does.
 */
function container(files: Record<string, Node>): { container: Docker.Container; asked: string[] } {
  const asked: string[] = [];
  const resolveDir = (parts: string[]): string[] => {
    const out: string[] = [];
    for (const part of parts) {
      const here = `/${[...out, part].join('/')}`;
      const node = files[here];
      if (node?.link) out.splice(0, out.length, ...node.link.split('/').filter(Boolean));
      else out.push(part);
    }
    return out;
  };
  const fake = {
    getArchive: async ({ path }: { path: string }) => {
      asked.push(path);
      const parts = path.split('/').filter(Boolean);
      const real = `/${[...resolveDir(parts.slice(0, -1)), parts.at(-1)].join('/')}`;
      const node = files[real];
      if (!node) throw Object.assign(new Error('no such path'), { statusCode: 404 });
      return chunked(
        tarOf([
          {
            name: parts.at(-1)!,
            typeflag: node.link ? '2' : node.file ? '0' : '5',
            linkName: node.link ?? '',
            ...node,
          },
        ]),
      );
    },
  } as unknown as Docker.Container;
  return { container: fake, asked };
}

const tree = {
  '/workspace': open,
  '/workspace/proj': open,
  '/workspace/proj/secret': { uid: 1001, gid: 1001, mode: 0o700 },
  '/workspace/proj/secret/sub': open,
  '/work': { uid: 65532, gid: 65532, mode: 0o755 },
  '/work/l': { uid: 65532, gid: 65532, mode: 0o777, link: '/workspace/proj/secret' },
  '/work/rel': { uid: 65532, gid: 65532, mode: 0o777, link: '../workspace/proj' },
};

describe('checkWayTo', () => {
  it('refuses a path under a directory the sandbox user may not enter, named directly or through a link', async () => {
    for (const path of [
      '/workspace/proj/secret/key',
      '/workspace/proj/secret/sub/key',
      '/work/l/key',
      '/work/rel/secret/key',
    ])
      await expect(checkWayTo(container(tree).container, path, user), path).rejects.toThrow(
        /may not enter \/workspace\/proj\/secret \(owner 1001:1001, mode 0700\)/,
      );
  });

  it('lets through what the user may reach, the directory itself being left to the tool', async () => {
    for (const path of [
      '/workspace/proj/file',
      '/work/rel/file',
      '/workspace/proj/secret',
      '/work/x',
      '/nothing/here',
    ])
      await expect(checkWayTo(container(tree).container, path, user), path).resolves.toBeUndefined();
  });

  it('gives up on a loop of links', async () => {
    const loop = { '/a': { ...open, link: '/b' }, '/b': { ...open, link: '/a' } };
    await expect(checkWayTo(container(loop).container, '/a/x', user)).rejects.toThrow(/more than 40 links/);
  });
});

describe('sandbox_read_file and sandbox_explore', () => {
  it("give nothing under a directory the sandbox's user may not enter (the engine reads as root)", async () => {
    const files = {
      ...tree,
      '/workspace/proj/secret/key': { uid: 1001, gid: 1001, mode: 0o644, file: true },
    };
    const { container: inner } = container(files);
    const fake = {
      inspect: async () => ({
        Config: { User: '65532:65532' },
        HostConfig: { Tmpfs: { '/tmp': '' } },
        Mounts: [],
      }),
      getArchive: inner.getArchive,
    } as unknown as Docker.Container;
    const sandboxes = { located: async () => ({ container: fake }) } as unknown as Sandboxes;
    await expect(
      readFileIn(sandboxes, { name: 's', path: '/work/l/key', offset: 0, maxBytes: 1024 }),
    ).rejects.toMatchObject({ code: 'SANDBOX_PATH' });
    await expect(
      exploreIn(sandboxes, { name: 's', path: '/workspace/proj/secret/sub', depth: 1, maxEntries: 10 }),
    ).rejects.toMatchObject({ code: 'SANDBOX_PATH' });
  });
});
