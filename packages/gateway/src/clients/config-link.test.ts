// A client config that is a symbolic link (a dotfiles folder, a profile shared between machines)
// is written through to the file it names, with the backup beside that file; the link is never
// replaced by a plain file. What cannot be written through is refused with the reason.
import {
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config/servers.js';
import { importClient } from './import.js';
import { setupClient } from './setup.js';

const LAUNCH = { command: '/usr/bin/node', args: ['/opt/ringfence/bin/run.js'] };
const HOME = '/home/me/.ringfence';
const ORIGINAL = {
  mcpServers: { docs: { command: 'npx', args: ['-y', '@acme/docs-mcp@1.2.3'] } },
  other: 'kept',
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-config-link-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** dotfiles/claude.json ← profile/config.json ← client/claude_desktop_config.json */
async function linkChain() {
  const target = join(dir, 'dotfiles', 'claude.json');
  await mkdir(join(dir, 'dotfiles'));
  await mkdir(join(dir, 'profile'));
  await mkdir(join(dir, 'client'));
  await writeFile(target, JSON.stringify(ORIGINAL), { mode: 0o640 });
  const middle = join(dir, 'profile', 'config.json');
  await symlink('../dotfiles/claude.json', middle);
  const path = join(dir, 'client', 'claude_desktop_config.json');
  await symlink(middle, path);
  return { target, middle, path };
}

const importer = (path: string) =>
  importClient({
    kind: 'claude-desktop',
    path,
    home: HOME,
    launch: LAUNCH,
    dryRun: false,
    registered: [],
    register: async (input) => ({ name: input.name }) as ServerConfig,
  });

describe('a symbolic-linked client config', () => {
  it('import writes through a chain of links to the file, keeps every link, and backs up beside the file', async () => {
    const { target, middle, path } = await linkChain();
    const result = await importer(path);
    expect(result.target).toBe(target);
    // Both links are still links, naming what they named.
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
    expect(await readlink(path)).toBe(middle);
    expect((await lstat(middle)).isSymbolicLink()).toBe(true);
    expect(await readlink(middle)).toBe('../dotfiles/claude.json');
    // The file they name holds the new entries, with its mode and its other keys.
    const written = JSON.parse(await readFile(target, 'utf8'));
    expect(written.other).toBe('kept');
    expect(written.mcpServers.docs.args).toEqual([
      '/opt/ringfence/bin/run.js',
      'mcp',
      'serve',
      '--only',
      'docs',
    ]);
    expect((await lstat(target)).mode & 0o777).toBe(0o640);
    // The backup is beside the file, holding it as it was; nothing new beside the links.
    expect(result.backup?.startsWith(`${target}.ringfence-backup-`)).toBe(true);
    expect(JSON.parse(await readFile(result.backup!, 'utf8'))).toEqual(ORIGINAL);
    expect(await readdir(join(dir, 'client'))).toEqual(['claude_desktop_config.json']);
    expect(await readdir(join(dir, 'profile'))).toEqual(['config.json']);
    // Run again: nothing left to import, the links still links.
    expect((await importer(path)).changes).toEqual([]);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
  });

  it('setup writes through a link as well', async () => {
    const { target, path } = await linkChain();
    const result = await setupClient({ kind: 'claude-desktop', path, home: HOME, launch: LAUNCH });
    expect(result.target).toBe(target);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
    expect(Object.keys(JSON.parse(await readFile(target, 'utf8')).mcpServers)).toEqual(['docs', 'ringfence']);
    expect(result.backup?.startsWith(`${target}.ringfence-backup-`)).toBe(true);
  });

  it('refuses a link to nothing with the reason, and creates nothing', async () => {
    const path = join(dir, 'claude_desktop_config.json');
    await symlink(join(dir, 'missing', 'claude.json'), path);
    for (const run of [
      () => setupClient({ kind: 'claude-desktop', path, home: HOME, launch: LAUNCH }),
      () => importer(path),
    ]) {
      await expect(run()).rejects.toMatchObject({
        code: 'CLIENT_CONFIG_LINK',
        message: expect.stringMatching(/symbolic link to .*missing.*does not exist.*never replaces the link/),
      });
      expect((await lstat(path)).isSymbolicLink()).toBe(true);
      expect(await readdir(dir)).toEqual(['claude_desktop_config.json']);
    }
  });

  it('refuses a loop of links, a link to a folder, and a file with other hard links', async () => {
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    await symlink(b, a);
    await symlink(a, b);
    await expect(
      setupClient({ kind: 'claude-desktop', path: a, home: HOME, launch: LAUNCH }),
    ).rejects.toMatchObject({
      code: 'CLIENT_CONFIG_LINK',
      message: expect.stringContaining('loops back on itself'),
    });
    const folder = join(dir, 'folder.json');
    await mkdir(join(dir, 'real-folder'));
    await symlink(join(dir, 'real-folder'), folder);
    await expect(
      setupClient({ kind: 'claude-desktop', path: folder, home: HOME, launch: LAUNCH }),
    ).rejects.toMatchObject({
      code: 'CLIENT_CONFIG_LINK',
      message: expect.stringContaining('is not a file'),
    });
    const file = join(dir, 'hard.json');
    await writeFile(file, JSON.stringify(ORIGINAL));
    await link(file, join(dir, 'hard-too.json'));
    await expect(importer(file)).rejects.toMatchObject({
      code: 'CLIENT_CONFIG_LINK',
      message: expect.stringContaining('2 names (hard links)'),
    });
    expect(JSON.parse(await readFile(join(dir, 'hard-too.json'), 'utf8'))).toEqual(ORIGINAL);
  });
});
