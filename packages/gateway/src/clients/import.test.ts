import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config/servers.js';
import type { RegistrationInput } from '../registration/plan.js';
import type { ClientKind } from './formats.js';
import { type ImportResult, importClient } from './import.js';

const FIXTURES = new URL('./__fixtures__/', import.meta.url).pathname;
/** Every secret value the fixtures hold: none may appear in anything shown to a person. */
const SECRETS = [
  'ghp_desktopFixtureSecret0123456789',
  'docsFixtureSecret',
  'sk-localFixtureSecret',
  'sk-codeFixtureSecret',
  'vscodeFixtureSecret',
  'cursorFixtureSecret',
  'cursorRemoteSecret',
  'vsDockerInlineSecret',
];
const LAUNCH = { command: '/usr/bin/node', args: ['/opt/ringfence/bin/run.js'] };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-import-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Import a copy of a fixture with a stand-in for `mcp add` that records what it was asked. */
async function importFixture(
  kind: ClientKind,
  fixture: string,
  refuse: (input: RegistrationInput) => string | undefined = () => undefined,
) {
  const path = join(dir, fixture);
  await copyFile(join(FIXTURES, fixture), path);
  const registered: RegistrationInput[] = [];
  const run = (names: string[]) =>
    importClient({
      kind,
      path,
      home: '/home/me/.ringfence',
      launch: LAUNCH,
      dryRun: false,
      registered: names,
      register: async (input) => {
        const refusal = refuse(input);
        if (refusal) throw new Error(refusal);
        registered.push(input);
        return { name: input.name } as ServerConfig;
      },
    });
  const first = await run([]);
  return { path, registered, first, again: () => run(registered.map((r) => r.name)) };
}

const shown = (result: ImportResult) => JSON.stringify({ rows: result.rows, changes: result.changes });
const rowOf = (result: ImportResult, entry: string) => result.rows.find((row) => row.entry === entry)!;
const serveEntry = (kind: 'typed' | 'untyped', only: string) => ({
  ...(kind === 'typed' ? { type: 'stdio' } : {}),
  command: '/usr/bin/node',
  args: ['/opt/ringfence/bin/run.js', 'mcp', 'serve', '--only', only],
  env: { RINGFENCE_HOME: '/home/me/.ringfence' },
});

describe('client import, Claude Desktop (claude_desktop_config.json, mcpServers)', () => {
  it('registers npx, docker and mcp-remote entries, skips the rest with the reason, rewrites the file and keeps a backup', async () => {
    delete process.env.DOCKER_HOST;
    const original = await readFile(join(FIXTURES, 'claude_desktop_config.json'), 'utf8');
    const { path, registered, first, again } = await importFixture(
      'claude-desktop',
      'claude_desktop_config.json',
    );
    expect(registered).toEqual([
      {
        name: 'memory',
        npm: '@modelcontextprotocol/server-memory@2026.8.31',
        env: ['MEMORY_FILE_PATH=/tmp/memory.jsonl'],
      },
      {
        name: 'github',
        image: 'ghcr.io/github/github-mcp-server:0.9',
        env: ['GITHUB_PERSONAL_ACCESS_TOKEN=ghp_desktopFixtureSecret0123456789'],
        mounts: ['docs'],
      },
      {
        name: 'docs-search',
        url: 'https://docs.example.com/mcp',
        headers: ['Authorization=Bearer docsFixtureSecret'],
      },
    ]);
    expect(rowOf(first, 'github').notes.join('\n')).toContain('mount /home/me/.ssh:/root/.ssh not carried');
    expect(rowOf(first, 'fetch')).toMatchObject({
      outcome: 'skipped',
      reason: expect.stringContaining('Python'),
    });
    expect(rowOf(first, 'local-tool')).toMatchObject({
      outcome: 'skipped',
      reason: expect.stringContaining('runs a program of this machine (my-mcp-server)'),
    });

    const written = JSON.parse(await readFile(path, 'utf8'));
    expect(written.globalShortcut).toBe('Ctrl+Space');
    expect(written.mcpServers.memory).toEqual(serveEntry('untyped', 'memory'));
    expect(written.mcpServers['Docs Search']).toEqual(serveEntry('untyped', 'docs-search'));
    expect(written.mcpServers.fetch).toEqual(JSON.parse(original).mcpServers.fetch);
    expect(written.mcpServers['local-tool']).toEqual(JSON.parse(original).mcpServers['local-tool']);
    expect(await readFile(first.backup!, 'utf8')).toBe(original);

    const second = await again();
    expect(second.changes).toEqual([]);
    expect(second.backup).toBeUndefined();
    expect(rowOf(second, 'memory').outcome).toBe('already through ringfence');
    expect(await readFile(path, 'utf8')).toBe(`${JSON.stringify(written, null, 2)}\n`);
    expect((await readdir(dir)).filter((f) => f.includes('ringfence-backup'))).toHaveLength(1);
    expect(registered).toHaveLength(3);

    for (const secret of SECRETS) expect(shown(first) + shown(second)).not.toContain(secret);
  });

  it('keeps an entry whose registration was refused as it was, with the refusal as its reason', async () => {
    const { path, first } = await importFixture('claude-desktop', 'claude_desktop_config.json', (input) =>
      input.image ? 'The image ghcr.io/github/github-mcp-server:0.9 is not on this host' : undefined,
    );
    expect(rowOf(first, 'github')).toMatchObject({
      outcome: 'skipped',
      reason: expect.stringContaining('not on this host'),
    });
    const written = JSON.parse(await readFile(path, 'utf8'));
    expect(written.mcpServers.github.command).toBe('docker');
  });

  it('shows the change before the file is touched', async () => {
    const path = join(dir, 'c.json');
    await copyFile(join(FIXTURES, 'cursor.mcp.json'), path);
    const original = await readFile(path, 'utf8');
    let seen: string | undefined;
    await importClient({
      kind: 'cursor',
      path,
      home: '/h',
      launch: LAUNCH,
      dryRun: false,
      registered: [],
      register: async (input) => ({ name: input.name }) as ServerConfig,
      beforeWrite: (result) => {
        expect(result.changes.map((c) => c.entry)).toEqual(['server-name', 'remote-server']);
        seen = readFileSync(path, 'utf8');
      },
    });
    expect(seen).toBe(original);
    expect(await readFile(path, 'utf8')).not.toBe(original);
  });

  it('keeps the file mode of a config that holds tokens', async () => {
    const { path } = await importFixture('claude-desktop', 'claude_desktop_config.json');
    expect((await stat(path)).mode & 0o777).toBe(
      (await stat(join(FIXTURES, 'claude_desktop_config.json'))).mode & 0o777,
    );
  });
});

describe('client import, Claude Code (.mcp.json, mcpServers with type)', () => {
  it('imports stdio and http entries, refuses SSE and placeholder expansions, and writes typed entries', async () => {
    const { path, registered, first } = await importFixture('claude-code', 'claude-code.mcp.json');
    expect(registered).toEqual([
      {
        name: 'filesystem',
        npm: '@modelcontextprotocol/server-filesystem@^2026.8.0',
        command: ['/workspace/docs'],
      },
      {
        name: 'api-server',
        url: 'https://mcp.example.com/mcp',
        headers: ['Authorization=Bearer sk-codeFixtureSecret'],
      },
    ]);
    expect(rowOf(first, 'legacy').reason).toContain('SSE');
    expect(rowOf(first, 'expanded').reason).toContain('placeholders');
    const written = JSON.parse(await readFile(path, 'utf8'));
    expect(written.mcpServers['api-server']).toEqual(serveEntry('typed', 'api-server'));
    for (const secret of SECRETS) expect(shown(first)).not.toContain(secret);
  });
});

describe('client import, VS Code (.vscode/mcp.json, servers and inputs)', () => {
  it('imports under "servers", leaves inputs and an input-placeholder entry alone, and drops docker flags it sets itself', async () => {
    const { path, registered, first, again } = await importFixture('vscode', 'vscode.mcp.json');
    expect(registered.map((r) => r.name)).toEqual(['memory', 'remote', 'everything']);
    expect(registered[0]).toMatchObject({ npm: '@modelcontextprotocol/server-memory' });
    expect(registered[2]).toEqual({
      name: 'everything',
      image: 'example/everything:1',
      env: ['MODE=demo', 'SERVICE_PASSWORD=vsDockerInlineSecret'],
    });
    expect(rowOf(first, 'everything').notes.join('\n')).toContain('--network host not carried');
    expect(rowOf(first, 'perplexity').reason).toContain('placeholders');
    const written = JSON.parse(await readFile(path, 'utf8'));
    expect(written.inputs).toHaveLength(1);
    expect(written.servers.memory).toEqual(serveEntry('typed', 'memory'));
    expect(written.mcpServers).toBeUndefined();
    expect((await again()).changes).toEqual([]);
    for (const secret of SECRETS) expect(shown(first)).not.toContain(secret);
  });
});

describe('client import, Cursor (~/.cursor/mcp.json, mcpServers)', () => {
  it('imports npx and url entries and skips a python one', async () => {
    const { registered, first } = await importFixture('cursor', 'cursor.mcp.json');
    expect(registered).toEqual([
      { name: 'server-name', npm: 'mcp-server@1.2.3', env: ['API_KEY=cursorFixtureSecret'] },
      {
        name: 'remote-server',
        url: 'https://remote.example.com/mcp',
        headers: ['Authorization=Bearer cursorRemoteSecret'],
      },
    ]);
    expect(rowOf(first, 'python').outcome).toBe('skipped');
    for (const secret of SECRETS) expect(shown(first)).not.toContain(secret);
  });
});

describe('client import --dry-run', () => {
  it('registers nothing and leaves the file as it was', async () => {
    const path = join(dir, 'c.json');
    await copyFile(join(FIXTURES, 'cursor.mcp.json'), path);
    const result = await importClient({
      kind: 'cursor',
      path,
      home: '/h',
      launch: LAUNCH,
      dryRun: true,
      registered: [],
      register: async () => {
        throw new Error('a dry run registered something');
      },
    });
    expect(result.rows.filter((row) => row.outcome === 'would import')).toHaveLength(2);
    expect(await readFile(path, 'utf8')).toBe(await readFile(join(FIXTURES, 'cursor.mcp.json'), 'utf8'));
    expect(await readdir(dir)).toEqual(['c.json']);
  });
});

it("a token in a client's args is never registered: the entry is skipped with how to register it by hand", async () => {
  const TOKEN = ['ghp_', 'Pos1tionalSecret0123456789abcdefAB'].join('');
  const path = join(dir, 'claude_desktop_config.json');
  const config = { mcpServers: { gh: { command: 'npx', args: ['-y', 'gh-mcp@1.0.0', '--token', TOKEN] } } };
  await writeFile(path, JSON.stringify(config));
  const inputs: RegistrationInput[] = [];
  const result = await importClient({
    kind: 'claude-desktop',
    path,
    home: dir,
    launch: LAUNCH,
    dryRun: false,
    registered: [],
    register: async (input) => {
      inputs.push(input);
      return { name: input.name } as ServerConfig;
    },
  });
  expect(inputs).toEqual([]);
  expect(result.rows).toMatchObject([{ entry: 'gh', outcome: 'skipped' }]);
  expect(result.rows[0]!.reason).toMatch(
    /argument 2 after the package or image carries a credential \(it has the format of a github key/,
  );
  expect(result.rows[0]!.reason).toMatch(/-e VAR=@secret:NAME/);
  expect(JSON.stringify(result)).not.toContain(TOKEN);
  // The client's entry is left as it was (nothing to point at ringfence).
  expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(config);
});
