import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

const VERSION = '2026.8.31';

/** Real third-party servers from npm, built offline into local images, contained, and used through the gateway. */
describe('real npm MCP servers in containers, through ringfence mcp serve', () => {
  let home: string;
  let workspace: string;
  let served: ServedClient;

  beforeAll(async () => {
    home = await freshHome();
    workspace = join(home, '..', 'workspace');
    await mkdir(join(workspace, 'docs'), { recursive: true });
    await mkdir(join(workspace, 'out'), { recursive: true });
    if (process.getuid?.() === 0) await chmod(join(workspace, 'out'), 0o777);
    await writeFile(join(workspace, 'docs', 'guide.md'), '# Guide\nfenced text\n');
    const env = { RINGFENCE_HOME: home };
    const adds = [
      [
        'files',
        '--npm',
        `@modelcontextprotocol/server-filesystem@${VERSION}`,
        '--mount',
        'docs',
        '--mount',
        'out:rw',
        '--',
        '/workspace/docs',
        '/workspace/out',
      ],
      [
        'memory',
        '--npm',
        `@modelcontextprotocol/server-memory@${VERSION}`,
        '-e',
        'MEMORY_FILE_PATH=/tmp/memory.jsonl',
      ],
      ['every', '--npm', `@modelcontextprotocol/server-everything@${VERSION}`],
    ];
    // Registration builds each image from the package installed in this repository: no registry.
    for (const args of adds) {
      const result = await ringfence(['mcp', 'add', ...args], env);
      expect(result.code, result.stderr).toBe(0);
    }
    served = await connectStdio(home, {}, {}, { cwd: workspace });
  });
  afterAll(async () => {
    await served?.close();
  });

  it('lists the tools of all three, in config order', async () => {
    const names = (await served.client.listTools()).tools.map((t) => t.name);
    const firstOf = (prefix: string) => names.findIndex((n) => n.startsWith(prefix));
    expect(names).toEqual(
      expect.arrayContaining([
        'files_read_text_file',
        'files_write_file',
        'memory_create_entities',
        'memory_read_graph',
        'every_echo',
      ]),
    );
    expect(firstOf('files_')).toBeLessThan(firstOf('memory_'));
    expect(firstOf('memory_')).toBeLessThan(firstOf('every_'));
    for (const name of names) expect(name).toMatch(/^(files|memory|every)_/);
  });

  it('filesystem: reads the read-only mount, writes the writable one, and cannot write the read-only one', async () => {
    const read = await served.client.callTool({
      name: 'files_read_text_file',
      arguments: { path: '/workspace/docs/guide.md' },
    });
    expect(firstText(read)).toContain('fenced text');
    const written = await served.client.callTool({
      name: 'files_write_file',
      arguments: { path: '/workspace/out/answer.txt', content: 'written from the sandbox' },
    });
    expect(written.isError, firstText(written)).toBeFalsy();
    expect(await readFile(join(workspace, 'out', 'answer.txt'), 'utf8')).toBe('written from the sandbox');
    const refused = await served.client.callTool({
      name: 'files_write_file',
      arguments: { path: '/workspace/docs/evil.md', content: 'x' },
    });
    expect(refused.isError).toBe(true);
    await expect(readFile(join(workspace, 'docs', 'evil.md'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('memory: keeps state in its tmpfs for the session', async () => {
    await served.client.callTool({
      name: 'memory_create_entities',
      arguments: {
        entities: [{ name: 'ringfence', entityType: 'project', observations: ['contains servers'] }],
      },
    });
    const graph = await served.client.callTool({ name: 'memory_read_graph', arguments: {} });
    expect(firstText(graph)).toContain('contains servers');
  });

  it('everything: echo and structured content', async () => {
    expect(
      firstText(
        await served.client.callTool({ name: 'every_echo', arguments: { message: 'hi from a box' } }),
      ),
    ).toContain('hi from a box');
    const structured = await served.client.callTool({
      name: 'every_get-structured-content',
      arguments: { location: 'New York' },
    });
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
  });
});
