import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { TarReader } from './tar-read.js';
import { numericUser, readOnlyMountOf, writeFile } from './write.js';

function fakeContainer(options: {
  user?: string;
  mounts?: { Destination: string; RW: boolean }[];
  fail?: number;
}) {
  const puts: { tar: Buffer; options: Record<string, unknown> }[] = [];
  const container = {
    inspect: async () => ({ Config: { User: options.user ?? '65532:65532' }, Mounts: options.mounts ?? [] }),
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

const request = { name: 's', path: '/tmp/dir/note.txt', content: Buffer.from('hi'), mode: 0o600 };

describe('writeFile', () => {
  it("puts a one-file tar into the file's directory, owned by the sandbox's user", async () => {
    const { container, puts } = fakeContainer({ user: '1000:1001' });
    expect(await writeFile(container, request)).toEqual({
      path: '/tmp/dir/note.txt',
      bytes: 2,
      mode: '0600',
      owner: '1000:1001',
    });
    expect(puts[0]!.options).toEqual({ path: '/tmp/dir', noOverwriteDirNonDir: 'true' });
    const names: string[] = [];
    new TarReader({
      entry: (e) => {
        names.push(`${e.name.toString()} ${e.type} ${e.mode.toString(8)}`);
        return false;
      },
    }).write(puts[0]!.tar);
    expect(names).toEqual(['note.txt file 600']);
    expect(puts[0]!.tar.subarray(108, 115).toString()).toBe((1000).toString(8).padStart(7, '0'));
  });

  it('refuses a path in a read-only mount before the engine is asked', async () => {
    const { container, puts } = fakeContainer({
      mounts: [
        { Destination: '/workspace/docs', RW: false },
        { Destination: '/workspace/rw', RW: true },
      ],
    });
    await expect(writeFile(container, { ...request, path: '/workspace/docs/x' })).rejects.toThrow(
      /mounted read-only/,
    );
    await expect(writeFile(container, { ...request, path: '/workspace/docs' })).rejects.toThrow(
      /mounted read-only/,
    );
    expect(puts).toEqual([]);
    await writeFile(container, { ...request, path: '/workspace/docsx' });
    await writeFile(container, { ...request, path: '/workspace/rw/x' });
    expect(puts).toHaveLength(2);
  });

  it("says what happened when the engine refuses, and when the sandbox's user is a name", async () => {
    await expect(writeFile(fakeContainer({ fail: 404 }).container, request)).rejects.toThrow(
      /\/tmp\/dir does not exist/,
    );
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
