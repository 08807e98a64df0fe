import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { chunked, tarOf } from './__fixtures__/tar.js';
import { TarReader } from './tar-read.js';
import { numericUser, readOnlyMountOf, writeFile } from './write.js';

const DIR = 2 ** 31;

function fakeContainer(
  options: {
    user?: string;
    mounts?: { Destination: string; RW: boolean; Type?: string }[];
    fail?: number;
    /** Paths that exist, with their Go file modes (default: /work and /work/dir, directories). */
    existing?: Record<string, number>;
    /** What the engine's archive of a path holds first: its owner and mode. */
    owners?: Record<
      string,
      { uid: number; gid: number; mode: number; dir?: boolean; typeflag?: string; linkName?: string }
    >;
  } = {},
) {
  const puts: { tar: Buffer; options: Record<string, unknown> }[] = [];
  const existing = options.existing ?? { '/work': DIR | 0o755, '/work/dir': DIR | 0o755 };
  const container = {
    inspect: async () => ({
      Config: { User: options.user ?? '65532:65532' },
      HostConfig: { Tmpfs: { '/tmp': 'rw,size=64m' } },
      Mounts: options.mounts ?? [],
    }),
    infoArchive: async ({ path }: { path: string }) => {
      if (!(path in existing)) throw Object.assign(new Error('no such path'), { statusCode: 404 });
      const stat = Buffer.from(JSON.stringify({ name: path, mode: existing[path] })).toString('base64');
      return { headers: { 'x-docker-container-path-stat': stat }, resume: () => {} };
    },
    getArchive: async ({ path }: { path: string }) => {
      const owner = options.owners?.[path];
      if (!owner) throw Object.assign(new Error('no such path'), { statusCode: 404 });
      const name = path.slice(path.lastIndexOf('/') + 1);
      return chunked(tarOf([{ name, typeflag: owner.dir ? '5' : '0', ...owner }]));
    },
    putArchive: async (tar: Buffer, opts: Record<string, unknown>) => {
      if (options.fail)
        throw Object.assign(new Error('engine says no'), {
          statusCode: options.fail,
          json: { message: 'engine says no' },
        });
      puts.push({ tar, options: opts });
    },
  } as unknown as Docker.Container;
  return { container, puts };
}

function entriesOf(tar: Buffer): string[] {
  const names: string[] = [];
  new TarReader({
    entry: (e) => {
      names.push(`${e.name.toString()} ${e.type} ${e.mode.toString(8)}`);
      return false;
    },
  }).write(tar);
  return names;
}

const request = { name: 's', path: '/work/dir/note.txt', content: Buffer.from('hi'), mode: 0o600 };

describe('writeFile', () => {
  it("puts a one-file tar into the file's directory, owned by the sandbox's user", async () => {
    const { container, puts } = fakeContainer({ user: '1000:1001' });
    expect(await writeFile(container, request)).toEqual({
      path: '/work/dir/note.txt',
      bytes: 2,
      mode: '0600',
      owner: '1000:1001',
    });
    expect(puts[0]!.options).toEqual({ path: '/work/dir', noOverwriteDirNonDir: 'true' });
    expect(entriesOf(puts[0]!.tar)).toEqual(['note.txt file 600']);
    expect(puts[0]!.tar.subarray(108, 115).toString()).toBe((1000).toString(8).padStart(7, '0'));
  });

  it('makes the directories missing on its way, and only those', async () => {
    const { container, puts } = fakeContainer({ existing: { '/work': DIR | 0o755 } });
    const written = await writeFile(container, { ...request, path: '/work/a/b/note.txt' });
    expect(written.made_directories).toEqual(['/work/a', '/work/a/b']);
    expect(puts[0]!.options.path).toBe('/work');
    expect(entriesOf(puts[0]!.tar)).toEqual([
      'a/ directory 755',
      'a/b/ directory 755',
      'a/b/note.txt file 600',
    ]);
    const top = fakeContainer({ existing: {} });
    await writeFile(top.container, { ...request, path: '/work/note.txt' });
    expect(top.puts[0]!.options.path).toBe('/');
    expect(entriesOf(top.puts[0]!.tar)).toEqual(['work/ directory 755', 'work/note.txt file 600']);
  });

  it('refuses a file on the way, and a path too deep to make', async () => {
    const file = fakeContainer({ existing: { '/work': 0o644 } });
    await expect(writeFile(file.container, { ...request, path: '/work/x/y' })).rejects.toThrow(
      /\/work is a file/,
    );
    const deep = `/${Array.from({ length: 40 }, (_, i) => `d${i}`).join('/')}/f`;
    await expect(writeFile(fakeContainer().container, { ...request, path: deep })).rejects.toThrow(
      /more than 32/,
    );
    expect(file.puts).toEqual([]);
  });

  it('refuses a read-only mount, a tmpfs and the kernel file systems before the engine is asked', async () => {
    const { container, puts } = fakeContainer({
      mounts: [
        { Destination: '/workspace/docs', RW: false },
        { Destination: '/workspace/rw', RW: true },
      ],
      existing: { '/workspace': DIR, '/workspace/rw': DIR },
    });
    await expect(writeFile(container, { ...request, path: '/workspace/docs/x' })).rejects.toThrow(
      /mounted read-only/,
    );
    await expect(writeFile(container, { ...request, path: '/workspace/docs' })).rejects.toThrow(
      /mounted read-only/,
    );
    await expect(writeFile(container, { ...request, path: '/tmp/x' })).rejects.toThrow(/in \/tmp, a tmpfs/);
    for (const path of ['/proc/1/mem', '/sys/x', '/dev/null'])
      await expect(writeFile(container, { ...request, path })).rejects.toThrow(/the kernel's/);
    expect(puts).toEqual([]);
    await writeFile(container, { ...request, path: '/workspace/docsx' });
    await writeFile(container, { ...request, path: '/workspace/rw/x' });
    expect(puts).toHaveLength(2);
  });

  it('in a writable mount, writes only where the sandbox user may (the engine writes as root)', async () => {
    const mounted = (owners: NonNullable<Parameters<typeof fakeContainer>[0]>['owners']) =>
      fakeContainer({
        mounts: [{ Destination: '/workspace/rw', RW: true, Type: 'bind' }],
        existing: { '/workspace': DIR, '/workspace/rw': DIR },
        owners,
      });
    const path = '/workspace/rw/x';
    const mine = { uid: 65532, gid: 65532, mode: 0o755, dir: true };
    const rootFile = mounted({ '/workspace/rw': mine, [path]: { uid: 0, gid: 0, mode: 0o644 } });
    await expect(writeFile(rootFile.container, { ...request, path })).rejects.toThrow(
      /may not write it \(owner 0:0, mode 0644\)/,
    );
    const rootDir = mounted({ '/workspace/rw': { ...mine, uid: 0, gid: 0 } });
    await expect(writeFile(rootDir.container, { ...request, path })).rejects.toThrow(/may not write in it/);
    expect([...rootFile.puts, ...rootDir.puts]).toEqual([]);
    const ok = mounted({ '/workspace/rw': mine, [path]: { uid: 65532, gid: 65532, mode: 0o600 } });
    await writeFile(ok.container, { ...request, path });
    expect(ok.puts).toHaveLength(1);
  });

  it('judges a write through a link in the sandbox where it really lands: a read-only mount, or what the user may write', async () => {
    const LINK = 2 ** 27;
    type Owners = NonNullable<Parameters<typeof fakeContainer>[0]>['owners'];
    const mine = { uid: 65532, gid: 65532, mode: 0o755, dir: true };
    // /work/m -> /workspace/rw (or /workspace/ro): the engine writes where the link leads.
    const viaLink = (to: string, owners: Owners) =>
      fakeContainer({
        mounts: [
          { Destination: '/workspace/rw', RW: true, Type: 'bind' },
          { Destination: '/workspace/ro', RW: false, Type: 'bind' },
        ],
        existing: { '/work': DIR | 0o755, '/work/m': LINK | 0o777 },
        owners: {
          '/work': mine,
          '/work/m': { uid: 65532, gid: 65532, mode: 0o777, typeflag: '2', linkName: to },
          '/workspace': { ...mine, uid: 0, gid: 0 },
          ...owners,
        },
      });
    const path = '/work/m/x';
    const rootFile = viaLink('/workspace/rw', {
      '/workspace/rw': mine,
      '/workspace/rw/x': { uid: 0, gid: 0, mode: 0o644 },
    });
    await expect(writeFile(rootFile.container, { ...request, path })).rejects.toThrow(/may not write it/);
    const rootDir = viaLink('../workspace/rw', { '/workspace/rw': { ...mine, uid: 0, gid: 0 } });
    await expect(writeFile(rootDir.container, { ...request, path })).rejects.toThrow(/may not write in it/);
    const readOnly = viaLink('/workspace/ro', { '/workspace/ro': mine });
    await expect(writeFile(readOnly.container, { ...request, path })).rejects.toThrow(
      /leads by a link in the sandbox to \/workspace\/ro\/x, in \/workspace\/ro, which is mounted read-only/,
    );
    expect([...rootFile.puts, ...rootDir.puts, ...readOnly.puts]).toEqual([]);
    const ok = viaLink('/workspace/rw', { '/workspace/rw': mine });
    await writeFile(ok.container, { ...request, path });
    expect(ok.puts).toHaveLength(1);
  });

  it("says what happened when the engine refuses, and when the sandbox's user is a name", async () => {
    await expect(writeFile(fakeContainer({ fail: 400 }).container, request)).rejects.toThrow(
      /engine refused .*engine says no/,
    );
    await expect(writeFile(fakeContainer({ user: 'node' }).container, request)).rejects.toThrow(
      /not a numeric user/,
    );
  });
});

describe('helpers', () => {
  it('numericUser and readOnlyMountOf', () => {
    expect(numericUser('65532')).toEqual({ uid: 65532, gid: 65532 });
    expect(numericUser('')).toBeUndefined();
    expect(readOnlyMountOf('/a/b', [{ Destination: '/a/', RW: false }])).toBe('/a/');
  });
});
