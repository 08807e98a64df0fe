import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
let home: string;
const saved = { ...process.env };

/** A Cursor config (mcpServers, from Cursor's docs) with tokens in headers and env. */
const CURSOR = {
  mcpServers: {
    docs: { url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer cliHeaderSecret' } },
    memory: {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-memory@2026.8.31'],
      env: { API_TOKEN: 'cliEnvSecret' },
    },
    fetch: { command: 'uvx', args: ['mcp-server-fetch'] },
  },
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-client-'));
  home = join(dir, 'home');
  process.env.RINGFENCE_HOME = home;
  process.env.RINGFENCE_POLICY_DIR = join(dir, 'policy');
  // No engine answers here: the npx entry is refused with the engine's reason and kept as it was.
  process.env.DOCKER_HOST = `unix://${join(dir, 'no-engine.sock')}`;
  // Imported values go to the credential store: its encrypted file here, whatever keyring runs.
  process.env.RINGFENCE_CREDENTIALS = 'file';
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('ringfence client import', () => {
  it('registers the url entry with its header moved to the credential store, prints the table and the change, never a secret value', async () => {
    const config = join(dir, 'mcp.json');
    await writeFile(config, JSON.stringify(CURSOR), { mode: 0o600 });
    const first = await runCommand(['client', 'import', 'cursor', '--config', config], { root });
    expect(first.error).toBeUndefined();
    const output = first.stdout + first.stderr;
    expect(output).toMatch(/docs\s+imported as docs/);
    // Its env value has nowhere to go in a server with no network: kept in the store, not registered.
    expect(output).toMatch(
      /memory\s+skipped: .*no network.*kept in the credential store as memory-API_TOKEN/,
    );
    expect(output).toContain(
      'header Authorization moved to the credential store (class bearer, bound to docs, in encrypted file) as docs-Authorization',
    );
    expect(output).toMatch(/fetch\s+skipped: it runs a Python program/);
    expect(output).toContain('+ docs: ');
    expect(output).toContain('headers Authorization (values not shown)');
    for (const secret of ['cliHeaderSecret', 'cliEnvSecret']) expect(output).not.toContain(secret);

    const servers = join(home, 'mcp-servers.json');
    expect(JSON.parse(await readFile(servers, 'utf8')).servers[0]).toMatchObject({
      name: 'docs',
      url: 'https://docs.example.com/mcp',
      headers: { Authorization: '@secret:docs-Authorization' },
    });
    expect((await stat(servers)).mode & 0o777).toBe(0o600);
    for (const file of await readdir(home, { withFileTypes: true }))
      if (file.isFile())
        for (const secret of ['cliHeaderSecret', 'cliEnvSecret'])
          expect(await readFile(join(home, file.name), 'utf8')).not.toContain(secret);
    const written = JSON.parse(await readFile(config, 'utf8'));
    expect(written.mcpServers.docs.args.slice(-4)).toEqual(['mcp', 'serve', '--only', 'docs']);
    expect(written.mcpServers.docs.env).toEqual({
      RINGFENCE_HOME: home,
      DOCKER_HOST: process.env.DOCKER_HOST,
    });
    expect(written.mcpServers.memory).toEqual(CURSOR.mcpServers.memory);

    const second = await runCommand(['client', 'import', 'cursor', '--config', config], { root });
    expect(second.stdout).toMatch(/docs\s+already through ringfence/);
    expect(second.stdout).toContain('Nothing to change');
    expect((await readdir(dir)).filter((f) => f.includes('ringfence-backup'))).toHaveLength(1);
  });

  it('--review-first registers every imported server to be withheld until approved', async () => {
    const config = join(dir, 'mcp.json');
    await writeFile(config, JSON.stringify(CURSOR), { mode: 0o600 });
    const run = await runCommand(['client', 'import', 'cursor', '--config', config, '--review-first'], {
      root,
    });
    expect(run.error).toBeUndefined();
    expect(run.stdout).toContain('withheld until you approve them');
    const servers = JSON.parse(await readFile(join(home, 'mcp-servers.json'), 'utf8')).servers;
    expect(servers[0]).toMatchObject({ name: 'docs', review_first: true });
  });

  it('an unknown client is refused with the ones it knows', async () => {
    const { error } = await runCommand(['client', 'import', 'zed'], { root });
    expect(error?.message).toMatch(/Expected zed to be one of: claude-desktop, claude-code, vscode, cursor/);
  });
});

describe('ringfence client setup', () => {
  it('--per-server with nothing registered refuses and says what to run', async () => {
    const { error } = await runCommand(
      ['client', 'setup', 'cursor', '--config', join(dir, 'm.json'), '--per-server'],
      {
        root,
      },
    );
    expect(error?.message).toContain('ringfence client import cursor');
  });
});

describe('ringfence client import, as printed (issue 21.6 and the symlinked config)', () => {
  it('prints no token of a URL, a --pat value or a positional token, and writes a linked config through', async () => {
    const secrets = ['cliUserinfo01', 'cliQuery02', 'cliPat03', 'ghp_cliPositional0123456789abcdefABCDEF'];
    const target = join(dir, 'dotfiles', 'mcp.json');
    await mkdir(join(dir, 'dotfiles'));
    await writeFile(
      target,
      JSON.stringify({
        mcpServers: {
          remote: { url: `https://me:${secrets[0]}@r.example.com/mcp?token=${secrets[1]}`, type: 'sse' },
          local: { command: 'npx', args: ['-y', 'some-mcp@1.0.0', '--pat', secrets[2], secrets[3]] },
          docs: { url: 'https://docs.example.com/mcp' },
        },
      }),
      { mode: 0o600 },
    );
    const config = join(dir, 'mcp.json');
    await symlink(target, config);
    const dry = await runCommand(['client', 'import', 'cursor', '--config', config, '--dry-run'], { root });
    const result = await runCommand(['client', 'import', 'cursor', '--config', config], { root });
    expect(result.error).toBeUndefined();
    for (const secret of secrets)
      for (const output of [dry.stdout, dry.stderr, result.stdout, result.stderr])
        expect(output).not.toContain(secret);
    // A token in the arguments is never carried into a container's command: the entry is skipped.
    expect(dry.stdout).toMatch(
      /local\s+skipped: argument 3 after the package or image carries a credential \(it has the format of a github key; the value is not shown\)/,
    );
    expect(result.stdout).toContain(`(a link: the file it names, ${target}, is rewritten; the link stays)`);
    expect((await lstat(config)).isSymbolicLink()).toBe(true);
    expect(await readlink(config)).toBe(target);
    expect(JSON.parse(await readFile(target, 'utf8')).mcpServers.docs.args).toContain('--only');
    expect(
      (await readdir(join(dir, 'dotfiles'))).some((f) => f.startsWith('mcp.json.ringfence-backup-')),
    ).toBe(true);
  });
});
