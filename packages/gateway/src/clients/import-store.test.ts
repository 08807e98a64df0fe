import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config/servers.js';
import { CredentialStore } from '../credentials/store.js';
import { importClient } from './import.js';
import { importedCredentialName, moveSecretsToStore } from './import-store.js';

const GH = 'ghp_ImportStoreSecret0123456789abcdefABCD';
const HEADER = 'Bearer importHeaderSecret0042';

let dir: string;
let home: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-import-store-'));
  home = join(dir, 'home');
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('client import moves values into the credential store', () => {
  it('env and header values become @secret: references, bound to their server, class guessed', async () => {
    const store = new CredentialStore(home, 'file');
    const moved = await moveSecretsToStore(
      'gh',
      {
        env: [`GITHUB_TOKEN=${GH}`, 'ALREADY=@secret:x', 'MEMORY_FILE_PATH=/tmp/m.jsonl', `UNNAMED=${GH}`],
        headers: [`Authorization=${HEADER}`, 'X-Odd$Token=v1'],
      },
      store,
    );
    // Configuration stays as it was; a credential moves, by its name or by its format.
    expect(moved.input.env).toEqual([
      'GITHUB_TOKEN=@secret:gh-GITHUB_TOKEN',
      'ALREADY=@secret:x',
      'MEMORY_FILE_PATH=/tmp/m.jsonl',
      'UNNAMED=@secret:gh-UNNAMED',
    ]);
    expect(moved.input.headers).toEqual([
      'Authorization=@secret:gh-Authorization',
      'X-Odd$Token=@secret:gh-X-Odd_Token',
    ]);
    expect(await store.list()).toMatchObject({
      'gh-GITHUB_TOKEN': { class: 'github', bound_to: ['gh'] },
      'gh-Authorization': { class: 'bearer', bound_to: ['gh'] },
      'gh-X-Odd_Token': { class: 'generic', bound_to: ['gh'] },
      'gh-UNNAMED': { class: 'github', bound_to: ['gh'] },
    });
    expect(await store.value('gh-Authorization')).toBe(HEADER);
    for (const note of moved.notes) for (const v of [GH, HEADER, 'v1']) expect(note).not.toContain(v);
    expect(moved.notes[0]).toMatch(
      /env GITHUB_TOKEN moved to the credential store \(class github, bound to gh, in encrypted file\) as gh-GITHUB_TOKEN/,
    );
    expect(importedCredentialName('s', 'a'.repeat(100))).toHaveLength(64);
  });

  it('importClient: the registration gets only references, the notes say where the values went', async () => {
    const config = join(dir, 'mcp.json');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { docs: { url: 'https://docs.example.com/mcp', headers: { Authorization: HEADER } } },
      }),
    );
    const store = new CredentialStore(home, 'file');
    const registered: unknown[] = [];
    const result = await importClient({
      kind: 'cursor',
      path: config,
      home,
      launch: { command: 'ringfence', args: [] },
      dryRun: false,
      registered: [],
      register: async (input) => {
        registered.push(input);
        return { name: input.name } as ServerConfig;
      },
      storeSecrets: (server, input) => moveSecretsToStore(server, input, store),
    });
    expect(registered).toEqual([
      expect.objectContaining({ name: 'docs', headers: ['Authorization=@secret:docs-Authorization'] }),
    ]);
    expect(result.rows[0]?.notes.join('\n')).toContain('as docs-Authorization');
    expect(JSON.stringify(result)).not.toContain('importHeaderSecret0042');
    // Nothing in the home holds the value in the clear.
    for (const file of await readdir(home))
      expect(await readFile(join(home, file), 'utf8')).not.toContain('importHeaderSecret0042');
  });

  it('a refused registration keeps the stored values and says how to use them', async () => {
    const config = join(dir, 'mcp.json');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { mem: { command: 'npx', args: ['-y', 'm@1.0.0'], env: { API_TOKEN: GH } } },
      }),
    );
    const store = new CredentialStore(home, 'file');
    const result = await importClient({
      kind: 'cursor',
      path: config,
      home,
      launch: { command: 'ringfence', args: [] },
      dryRun: false,
      registered: [],
      register: async () => {
        throw new Error('server "mem" has no network (egress deny)');
      },
      storeSecrets: (server, input) => moveSecretsToStore(server, input, store),
    });
    expect(result.rows[0]).toMatchObject({ outcome: 'skipped' });
    expect(result.rows[0]?.reason).toContain('kept in the credential store as mem-API_TOKEN');
    expect(result.rows[0]?.reason).not.toContain(GH);
  });
});
