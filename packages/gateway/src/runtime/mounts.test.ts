import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MountError, resolveMounts, verifyMounts } from './mounts.js';

let dir: string;
let workspace: string;
const home = () => join(dir, 'home');
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-mounts-'));
  workspace = join(dir, 'workspace');
  await mkdir(join(workspace, 'data', 'sub'), { recursive: true });
  await mkdir(join(dir, 'secret'));
  await writeFile(join(dir, 'secret', 'key'), 'private');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const resolveData = (path = 'data') =>
  resolveMounts([{ path, mode: 'rw' }], [{ path: workspace, writable: true }], home());

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof MountError ? error.code : String(error);
  }
  return 'no error';
};

describe('verifyMounts', () => {
  it('accepts mounts that are still what was resolved', () => {
    const mounts = resolveData();
    expect(mounts[0]).toMatchObject({ requested: 'data', target: '/workspace/data', readOnly: false });
    expect(() => verifyMounts(mounts)).not.toThrow();
  });

  it('refuses a folder swapped for a link to a folder outside the workspace', async () => {
    const mounts = resolveData();
    await rename(join(workspace, 'data'), join(workspace, 'data-old'));
    await symlink(join(dir, 'secret'), join(workspace, 'data'));
    expect(codeOf(() => verifyMounts(mounts))).toBe('MOUNT_CHANGED');
    expect(() => verifyMounts(mounts)).toThrow(
      /Mount "data" changed .*became a symbolic link.*run ringfence mcp serve again/,
    );
  });

  it('refuses a link swapped in anywhere on the path, even when it leads back to the same folder', async () => {
    const mounts = resolveData('data/sub');
    await rename(join(workspace, 'data'), join(workspace, 'elsewhere'));
    await symlink(join(workspace, 'elsewhere'), join(workspace, 'data'));
    expect(() => verifyMounts(mounts)).toThrow(/data became a symbolic link/);
  });

  it('refuses another folder (or file) put in its place, and one that is gone', async () => {
    const mounts = resolveData();
    await rename(join(workspace, 'data'), join(workspace, 'data-old'));
    await mkdir(join(workspace, 'data'));
    expect(() => verifyMounts(mounts)).toThrow(/is now another directory/);
    await rm(join(workspace, 'data'), { recursive: true });
    expect(() => verifyMounts(mounts)).toThrow(/is gone \(ENOENT\)/);
  });
});
