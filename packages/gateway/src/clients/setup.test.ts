import { copyFile, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setupClient } from './setup.js';

const FIXTURES = new URL('./__fixtures__/', import.meta.url).pathname;
const LAUNCH = { command: '/usr/bin/node', args: ['/opt/ringfence/bin/run.js'] };
const HOME = '/home/me/.ringfence';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-setup-'));
  delete process.env.DOCKER_HOST;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('client setup', () => {
  it('creates a missing config (0600) with one entry naming ringfence by absolute path and carrying the home', async () => {
    const path = join(dir, 'Claude', 'claude_desktop_config.json');
    const result = await setupClient({ kind: 'claude-desktop', path, home: HOME, launch: LAUNCH });
    expect(result.backup).toBeUndefined();
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      mcpServers: {
        ringfence: {
          command: '/usr/bin/node',
          args: ['/opt/ringfence/bin/run.js', 'mcp', 'serve'],
          env: { RINGFENCE_HOME: HOME },
        },
      },
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await setupClient({ kind: 'claude-desktop', path, home: HOME, launch: LAUNCH })).changes).toEqual(
      [],
    );
  });

  it('--per-server: one typed --only entry per server, the single entry dropped, other entries and inputs kept, a backup beside', async () => {
    const path = join(dir, 'mcp.json');
    await copyFile(join(FIXTURES, 'vscode.mcp.json'), path);
    await setupClient({ kind: 'vscode', path, home: HOME, launch: LAUNCH });
    const result = await setupClient({
      kind: 'vscode',
      path,
      home: HOME,
      launch: LAUNCH,
      perServer: ['docs', 'files'],
    });
    const written = JSON.parse(await readFile(path, 'utf8'));
    expect(Object.keys(written.servers)).toEqual([
      'memory',
      'perplexity',
      'remote',
      'everything',
      'docs',
      'files',
    ]);
    expect(written.servers.docs).toEqual({
      type: 'stdio',
      command: '/usr/bin/node',
      args: ['/opt/ringfence/bin/run.js', 'mcp', 'serve', '--only', 'docs'],
      env: { RINGFENCE_HOME: HOME },
    });
    expect(written.inputs).toHaveLength(1);
    expect(result.changes.map((c) => c.entry).sort()).toEqual(['docs', 'files', 'ringfence']);
    expect(JSON.parse(await readFile(result.backup!, 'utf8')).servers.ringfence).toBeDefined();
    expect((await readdir(dir)).filter((f) => f.includes('ringfence-backup'))).toHaveLength(2);
  });

  it('--dry-run writes nothing', async () => {
    const path = join(dir, 'mcp.json');
    const result = await setupClient({ kind: 'cursor', path, home: HOME, launch: LAUNCH, dryRun: true });
    expect(result.changes).toHaveLength(1);
    expect(await readdir(dir)).toEqual([]);
  });
});
