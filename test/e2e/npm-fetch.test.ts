import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { docker, testLabels } from '../helpers/containers.js';
import { freePort, freshHome } from '../helpers/mcp.js';
import { type LocalRegistry, scriptedPackage, startLocalRegistry } from '../helpers/npm-registry.js';

const MEMORY = '@modelcontextprotocol/server-memory';
const VERSION = '2026.8.31';

/** One file out of an image, read through a stopped container (labelled, removed at once). */
async function fileInImage(image: string, path: string): Promise<string> {
  const container = await docker.createContainer({ Image: image, Labels: testLabels() });
  try {
    const archive = await container.getArchive({ path });
    const chunks: Buffer[] = [];
    for await (const chunk of archive as AsyncIterable<Buffer>) chunks.push(chunk);
    const tar = Buffer.concat(chunks);
    const size = Number.parseInt(tar.subarray(124, 136).toString().replace(/\0.*$/, '').trim(), 8);
    return tar.subarray(512, 512 + size).toString('utf8');
  } finally {
    await container.remove({ force: true });
  }
}

const imageOf = async (home: string, name: string): Promise<string> => {
  const config = JSON.parse(await readFile(join(home, 'mcp-servers.json'), 'utf8')) as {
    servers: { name: string; image: string }[];
  };
  return config.servers.find((s) => s.name === name)!.image;
};

/**
 * `mcp add --npm` on a machine where the package is not installed: ringfence fetches it itself
 * through the registry npm is configured with. Here that registry is on loopback and serves the
 * packages installed in this repository, so nothing leaves the machine.
 */
describe('mcp add --npm fetches, locks and reuses; client import builds on it', () => {
  let work: string;
  let home: string;
  let empty: string;
  let registry: LocalRegistry;
  let env: NodeJS.ProcessEnv;
  const marker = () => join(work, 'postinstall-ran');

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'rf-npm-'));
    home = await freshHome();
    // A folder with no node_modules anywhere above it: nothing can be found installed.
    empty = join(work, 'project');
    await mkdir(empty);
    const scripted = await scriptedPackage(join(work, 'scripted'), marker());
    registry = await startLocalRegistry([MEMORY], work, [scripted]);
    env = {
      RINGFENCE_HOME: home,
      npm_config_registry: registry.url,
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_userconfig: join(work, 'no-npmrc'),
      npm_config_fetch_retries: '0',
      npm_config_update_notifier: 'false',
    };
  });
  afterAll(async () => {
    await registry?.close();
    await ringfence(['mcp', 'rm', 'scripted'], env).catch(() => {});
    const images = await docker.listImages({ filters: { reference: ['ringfence/mcp-rf-scripted-server'] } });
    for (const image of images)
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => {});
    await rm(work, { recursive: true, force: true });
  });

  it('fetches the exact version from the configured registry and builds an image whose lock has integrity for every package', async () => {
    const result = await ringfence(
      ['mcp', 'add', 'memory', '--npm', `${MEMORY}@${VERSION}`],
      env,
      undefined,
      {
        cwd: empty,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Fetched ${MEMORY}@${VERSION}, install scripts disabled`);
    expect(registry.requests.some((path) => path.endsWith(`/${VERSION}.tgz`))).toBe(true);

    const lock = JSON.parse(await fileInImage(await imageOf(home, 'memory'), '/app/ringfence-lock.json')) as {
      package: { name: string; version: string };
      packages: Record<string, { version?: string; integrity?: string }>;
    };
    expect(lock.package).toEqual({ name: MEMORY, version: VERSION });
    const entries = Object.entries(lock.packages);
    expect(entries.length).toBeGreaterThan(10);
    expect(entries.map(([key]) => key)).toContain(`node_modules/${MEMORY}`);
    for (const [key, entry] of entries) expect(entry.integrity, key).toMatch(/^sha512-[A-Za-z0-9+/]+={0,2}$/);
  });

  it('fetches nothing again for the same version, and resolves a range once to the exact version it records', async () => {
    const before = registry.requests.length;
    const again = await ringfence(
      ['mcp', 'add', 'memory-b', '--npm', `${MEMORY}@${VERSION}`],
      env,
      undefined,
      {
        cwd: empty,
      },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`Using the copy already fetched of ${MEMORY}@${VERSION}`);
    expect(registry.requests.length).toBe(before);

    const ranged = await ringfence(
      ['mcp', 'add', 'memory-c', '--npm', `${MEMORY}@^2026.8.0`],
      env,
      undefined,
      {
        cwd: empty,
      },
    );
    expect(ranged.code, ranged.stderr).toBe(0);
    expect(ranged.stderr).toContain(`${MEMORY}@${VERSION} (for ${MEMORY}@^2026.8.0)`);
    // Resolving the range asks for the package document; no tarball is fetched again.
    expect(registry.requests.slice(before).every((path) => !path.endsWith('.tgz'))).toBe(true);
    expect(await imageOf(home, 'memory-c')).toBe(await imageOf(home, 'memory'));
  });

  it('builds a package that declares install scripts without running them, and says so', async () => {
    const result = await ringfence(
      ['mcp', 'add', 'scripted', '--npm', 'rf-scripted-server'],
      env,
      undefined,
      {
        cwd: empty,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Fetched rf-scripted-server@1.0.0 (for rf-scripted-server@latest)');
    expect(result.stderr).toContain('Not run: the install scripts of rf-scripted-server');
    expect(existsSync(marker())).toBe(false);
  });

  it('client import claude-desktop: the npx server is fetched, contained, and works again through the rewritten entry', async () => {
    const config = join(work, 'claude_desktop_config.json');
    const secret = 'memoryFileSecretPathValue';
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          notes: {
            command: 'npx',
            args: ['-y', `${MEMORY}@${VERSION}`],
            env: { MEMORY_FILE_PATH: `/tmp/${secret}.jsonl` },
          },
          fetch: { command: 'uvx', args: ['mcp-server-fetch'] },
        },
      }),
      { mode: 0o600 },
    );
    const imported = await ringfence(
      ['client', 'import', 'claude-desktop', '--config', config],
      env,
      undefined,
      {
        cwd: empty,
      },
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/notes\s+imported as notes/);
    expect(imported.stdout).toMatch(/fetch\s+skipped: it runs a Python program/);
    expect(imported.stdout + imported.stderr).not.toContain(secret);
    expect(
      (await readdir(work)).filter((f) => f.startsWith('claude_desktop_config.json.ringfence-backup-')),
    ).toHaveLength(1);

    // What Claude Desktop starts after a restart: the rewritten entry, with nothing else in its environment.
    const entry = JSON.parse(await readFile(config, 'utf8')).mcpServers.notes;
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { PATH: process.env.PATH!, ...entry.env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'claude-desktop-stand-in', version: '1.0.0' });
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
      await client.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name: 'fence', entityType: 'thing', observations: ['contained'] }] },
      });
      const graph = await client.callTool({ name: 'read_graph', arguments: {} });
      expect(JSON.stringify(graph.content)).toContain('contained');
    } finally {
      await client.close();
    }
    const again = await ringfence(
      ['client', 'import', 'claude-desktop', '--config', config],
      env,
      undefined,
      {
        cwd: empty,
      },
    );
    expect(again.stdout).toContain('Nothing to change');
  });

  it('offline (the registry refuses connections): a clear refusal with the manual alternative, nothing registered', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/`;
    const result = await ringfence(
      ['mcp', 'add', 'offline', '--npm', `${MEMORY}@2026.9.1`],
      { ...env, npm_config_registry: closed },
      undefined,
      { cwd: empty },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Could not reach the npm registry');
    expect(result.stderr).toContain(`npm install --ignore-scripts ${MEMORY}@2026.9.1`);
    expect(result.stderr).toContain('ringfence mcp add from that folder');
    expect(await readFile(join(home, 'mcp-servers.json'), 'utf8')).not.toContain('"offline"');
  });
});
