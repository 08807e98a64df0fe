import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  Client,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { selectServers } from '../config/select.js';
import type { HttpServerConfig } from '../config/servers.js';
import type { AuditSink } from '../ports/audit.js';
import { runGateway } from './run.js';

const ok = async () => ({ ok: true });

/** The client end of a stdio pipe pair, without a child process. */
class StdioLikeTransport implements Transport {
  private readonly buffer = new ReadBuffer();
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(
    private readonly input: PassThrough,
    private readonly output: PassThrough,
  ) {}
  async start() {
    this.input.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
  }
  async send(message: JSONRPCMessage) {
    this.output.write(serializeMessage(message));
  }
  async close() {
    this.output.end();
    this.onclose?.();
  }
}

const server = (name: string): HttpServerConfig => ({
  name,
  transport: 'http',
  url: 'https://example.invalid/mcp',
});

describe('selectServers (mcp serve --only)', () => {
  const registered = [server('docs'), server('memory')];

  it('serves every registered server without --only, and only the named one with it', () => {
    expect(selectServers(registered, undefined).map((s) => s.name)).toEqual(['docs', 'memory']);
    expect(selectServers(registered, 'memory').map((s) => s.name)).toEqual(['memory']);
  });

  it('refuses a name that is not registered, listing those that are and the command to see them', () => {
    expect(() => selectServers(registered, 'doc')).toThrow(
      '--only doc: no server of that name is registered (registered: docs, memory). See them with: ringfence mcp ls',
    );
    expect(() => selectServers([], 'docs')).toThrow(/\(none is registered\)/);
  });
});

describe('runGateway with nothing registered', () => {
  it('says so, naming the home, in the initialize instructions and on the report lines', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rf-empty-'));
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const lines: string[] = [];
    const running = await runGateway({
      home,
      servers: [],
      guard: { prepare: ok, checkArguments: ok, checkResult: ok },
      audit: { append: async () => ({}) } as unknown as AuditSink,
      createUpstream: () => {
        throw new Error('no server should start');
      },
      log: (line) => lines.push(line),
      stdin: toServer,
      stdout: fromServer,
    });
    const client = new Client({ name: 'probe', version: '1' });
    await client.connect(new StdioLikeTransport(fromServer, toServer));
    try {
      expect(client.getInstructions()).toContain(`no servers are registered in ${home}`);
      expect(client.getInstructions()).toContain('RINGFENCE_HOME');
      expect(lines.join('\n')).toContain(`no servers are registered in ${home}`);
      expect((await client.listTools()).tools).toEqual([]);
    } finally {
      await client.close();
      await running.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('runGateway over stdio, both eras on one entry', () => {
  const start = async () => {
    const home = await mkdtemp(join(tmpdir(), 'rf-eras-'));
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const running = await runGateway({
      home,
      servers: [],
      guard: { prepare: ok, checkArguments: ok, checkResult: ok },
      audit: { append: async () => ({}) } as unknown as AuditSink,
      createUpstream: () => {
        throw new Error('no server should start');
      },
      log: () => {},
      stdin: toServer,
      stdout: fromServer,
    });
    return {
      running,
      transport: new StdioLikeTransport(fromServer, toServer),
      done: async () => {
        await running.close();
        await rm(home, { recursive: true, force: true });
      },
    };
  };

  it('serves a 2026 client, with the same instructions a 2025 client gets', async () => {
    const modern = await start();
    const legacy = await start();
    const m = new Client(
      { name: 'modern', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const l = new Client({ name: 'legacy', version: '1' });
    try {
      await m.connect(modern.transport);
      await l.connect(legacy.transport);
      expect(m.getProtocolEra()).toBe('modern');
      expect(l.getProtocolEra()).toBe('legacy');
      expect((await m.listTools()).tools).toEqual([]);
      // Two gateways with two homes: the same words but for the home each names.
      const words = (c: Client) => c.getInstructions()?.replace(/rf-eras-\w+/, 'HOME');
      expect(m.getInstructions()).toContain('run in isolation by ringfence');
      expect(words(m)).toBe(words(l));
    } finally {
      await m.close();
      await l.close();
      await modern.done();
      await legacy.done();
    }
  });

  it('closes the instance a server/discover probe made when the client then falls back to initialize', async () => {
    const { running, transport, done } = await start();
    const listeners = () => running.gateway.listenerCount('catalogChanged');
    const before = listeners();
    const answers: JSONRPCMessage[] = [];
    transport.onmessage = (message) => answers.push(message);
    await transport.start();
    const until = async (n: number) => {
      for (let i = 0; i < 200 && answers.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'prober', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    } as JSONRPCMessage);
    await until(1);
    expect(answers[0]).toMatchObject({ id: 1, result: { supportedVersions: ['2026-07-28'] } });
    expect(listeners()).toBe(before + 1);
    await transport.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'prober', version: '1' },
      },
    } as JSONRPCMessage);
    await until(2);
    expect(answers[1]).toMatchObject({ id: 2, result: { protocolVersion: '2025-11-25' } });
    // The probe's instance is gone with its listener: one instance, one listener, for the connection.
    expect(listeners()).toBe(before + 1);
    await done();
    expect(listeners()).toBe(before);
  });
});
