import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cliBin, repoRoot } from './cli.js';
import { startWithReadyLine, track } from './processes.js';

export async function freshHome(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'rf-e2e-')), 'home');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `@modelcontextprotocol/server-everything` in streamable-HTTP mode; traffic only on loopback. */
export async function startEverything(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const entry = `${repoRoot}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
  const { spawn } = await import('node:child_process');
  const child = track(
    spawn(process.execPath, [entry, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${stderr}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}: ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill('SIGKILL') };
}

/** The scriptable test server (test/fixtures/tool-server.mjs) reading its tools from `toolsFile`. */
export async function startToolServer(toolsFile: string, behavioursFile: string) {
  const { child, ready, stderr } = await startWithReadyLine<{ port: number }>(process.execPath, [
    `${repoRoot}test/fixtures/tool-server.mjs`,
    toolsFile,
    behavioursFile,
  ]);
  return { url: `http://127.0.0.1:${ready.port}/mcp`, child, stderr, stop: () => child.kill('SIGKILL') };
}

/** The prompt, completion and logging test server (test/fixtures/prompt-server.mjs). */
export async function startPromptServer(promptsFile: string) {
  const { child, ready, stderr } = await startWithReadyLine<{ port: number }>(process.execPath, [
    `${repoRoot}test/fixtures/prompt-server.mjs`,
    promptsFile,
  ]);
  return { url: `http://127.0.0.1:${ready.port}/mcp`, child, stderr, stop: () => child.kill('SIGKILL') };
}

/** The resource test server (test/fixtures/resource-server.mjs), recording what reached it in `recordFile`. */
export async function startResourceServer(configFile: string, recordFile: string) {
  const { child, ready, stderr } = await startWithReadyLine<{ port: number }>(process.execPath, [
    `${repoRoot}test/fixtures/resource-server.mjs`,
    configFile,
    recordFile,
  ]);
  return { url: `http://127.0.0.1:${ready.port}/mcp`, child, stderr, stop: () => child.kill('SIGKILL') };
}

/** The long-call test server (test/fixtures/long-call-server.mjs), recording its calls in `recordFile`. */
export async function startLongCallServer(recordFile: string) {
  const { child, ready, stderr } = await startWithReadyLine<{ port: number }>(process.execPath, [
    `${repoRoot}test/fixtures/long-call-server.mjs`,
    recordFile,
  ]);
  return { url: `http://127.0.0.1:${ready.port}/mcp`, child, stderr };
}

/** `ringfence mcp serve --http` with `token` on a free loopback port, resolved once it listens. */
export async function serveHttp(home: string, token: string, args: string[] = []) {
  const { spawn } = await import('node:child_process');
  const port = await freePort();
  const child = track(
    spawn(process.execPath, [cliBin, 'mcp', 'serve', '--http', `127.0.0.1:${port}`, ...args], {
      env: { ...process.env, RINGFENCE_HOME: home, RINGFENCE_MCP_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child, stderr: () => stderr };
}

export interface ServedClient {
  readonly client: Client;
  stderr(): string;
  close(): Promise<void>;
}

/** The SDK's client talking to `ringfence mcp serve` over stdio, as an AI client would. */
export async function connectStdio(
  home: string,
  env: Record<string, string> = {},
  capabilities: Record<string, unknown> = {},
  options: { cwd?: string; args?: string[]; bin?: string } = {},
): Promise<ServedClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [options.bin ?? cliBin, 'mcp', 'serve', ...(options.args ?? [])],
    env: { ...(process.env as Record<string, string>), RINGFENCE_HOME: home, ...env },
    stderr: 'pipe',
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'e2e-client', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

export async function connectHttp(
  url: string,
  token: string,
  capabilities: Record<string, unknown> = {},
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'e2e-http-client', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return client;
}

export type TextContent = { type: 'text'; text: string };
export const firstText = (result: unknown): string =>
  (result as { content?: TextContent[] }).content?.[0]?.text ?? '';
