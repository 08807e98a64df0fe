import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, ringfence } from '../helpers/cli.js';
import { freshHome, serveHttp, startEverything } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

const INSPECTOR = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'cli.js');

/**
 * The MCP Inspector's CLI, run as a person would from a shell that knows nothing of ringfence:
 * PATH, and a HOME with no ~/.ringfence. Everything ringfence needs must come from the entry
 * `client setup` wrote (stdio) or from the URL and token (--http).
 */
function inspector(args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', ...args],
      { env: { PATH: process.env.PATH, HOME: home }, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const json = (run: { code: number; stdout: string; stderr: string }) => {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown[]> & { content?: { text?: string }[] };
};

describe('the MCP Inspector CLI against ringfence mcp serve', () => {
  let work: string;
  let home: string;
  let bareHome: string;
  let config: string;
  let upstream: { url: string; stop(): void };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'rf-inspector-'));
    home = await freshHome();
    bareHome = join(work, 'person');
    await mkdir(bareHome);
    upstream = await startEverything();
    const added = await ringfence(['mcp', 'add', 'every', '--url', upstream.url], { RINGFENCE_HOME: home });
    expect(added.code, added.stderr).toBe(0);
    // The Inspector reads Claude Desktop's format (mcpServers): the entry is exactly what setup writes.
    config = join(work, 'claude_desktop_config.json');
    const setup = await ringfence(['client', 'setup', 'claude-desktop', '--config', config], {
      RINGFENCE_HOME: home,
    });
    expect(setup.code, setup.stderr).toBe(0);
  });
  afterAll(async () => {
    upstream?.stop();
    await stopAll();
    await rm(work, { recursive: true, force: true });
  });

  const stdio = (method: string, ...rest: string[]) =>
    inspector(['--config', config, '--server', 'ringfence', '--method', method, ...rest], bareHome);

  it('the entry client setup wrote carries the home, so a bare environment still finds the servers', async () => {
    const entry = JSON.parse(await readFile(config, 'utf8')).mcpServers.ringfence;
    expect(entry.env.RINGFENCE_HOME).toBe(home);
    const tools = json(await stdio('tools/list')).tools as { name: string }[];
    expect(tools.map((t) => t.name)).toContain('every_echo');
  });

  it('stdio: tools/call goes through ringfence to the server and back', async () => {
    const result = json(
      await stdio('tools/call', '--tool-name', 'every_echo', '--tool-arg', 'message=through the fence'),
    );
    expect(JSON.stringify(result.content)).toContain('through the fence');
  });

  it('stdio: prompts/list lists the server’s prompts under ringfence names', async () => {
    const prompts = json(await stdio('prompts/list')).prompts as { name: string }[];
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) expect(prompt.name).toMatch(/^every_/);
  });

  it('stdio: resources/list lists the server’s resources in the gateway’s namespace', async () => {
    for (const resource of await resourcesList(stdio)) expect(resource.uri).toMatch(/^ringfence:every\//);
  });

  it('stdio: resources/read reads one of them through the gateway', async () => {
    await resourceRead(stdio);
  });

  it('without the home in its entry, the same Inspector gets an empty gateway (what setup prevents)', async () => {
    const entry = JSON.parse(await readFile(config, 'utf8')).mcpServers.ringfence;
    const run = await inspector([entry.command, ...entry.args, '--method', 'tools/list'], bareHome);
    expect(json(run).tools).toEqual([]);
  });

  describe('over --http', () => {
    let served: { url: string };
    const token = 'inspector-test-token-0123456789abcdef';
    beforeAll(async () => {
      served = await serveHttp(home, token);
    });
    const http = (method: string, ...rest: string[]) =>
      inspector(
        [
          served.url,
          '--transport',
          'http',
          '--header',
          `Authorization: Bearer ${token}`,
          '--method',
          method,
          ...rest,
        ],
        bareHome,
      );

    it('tools/list, tools/call and prompts/list', async () => {
      expect((json(await http('tools/list')).tools as { name: string }[]).map((t) => t.name)).toContain(
        'every_echo',
      );
      const called = json(
        await http('tools/call', '--tool-name', 'every_echo', '--tool-arg', 'message=over http'),
      );
      expect(JSON.stringify(called.content)).toContain('over http');
      expect((json(await http('prompts/list')).prompts as unknown[]).length).toBeGreaterThan(0);
    });

    it('resources/list and resources/read', async () => {
      await resourceRead(http);
    });

    it('without the token the Inspector is refused', async () => {
      const run = await inspector([served.url, '--transport', 'http', '--method', 'tools/list'], bareHome);
      expect(run.code).not.toBe(0);
    });
  });
});

/** Both transports, the same checks. */
export async function resourcesList(
  run: (method: string, ...rest: string[]) => Promise<{ code: number; stdout: string; stderr: string }>,
) {
  const listed = json(await run('resources/list')).resources as { uri: string }[];
  expect(listed.length).toBeGreaterThan(0);
  return listed;
}
export async function resourceRead(
  run: (method: string, ...rest: string[]) => Promise<{ code: number; stdout: string; stderr: string }>,
) {
  const [first] = await resourcesList(run);
  const read = json(await run('resources/read', '--uri', first!.uri)).contents as unknown[];
  expect(read.length).toBeGreaterThan(0);
}
