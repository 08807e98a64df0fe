import { Duplex, PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { ContainerServerConfig } from '../config/servers.js';
import type { ContainedServer } from '../ports/upstream.js';
import { attachStdio } from '../runtime/attach.js';
import { ContainerUpstream } from './container.js';

const frame = (type: number, text: string) => {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

/**
 * A container behind a fake engine connection, through the real attach and demultiplexing: it
 * answers `initialize` and never answers a call, so the call is in flight when the engine's
 * connection breaks.
 */
async function attachedServer(breakWhileStarting?: Error) {
  const toContainer = new PassThrough();
  const fromContainer = new PassThrough();
  const engine = Duplex.from({ writable: toContainer, readable: fromContainer });
  const calls: string[] = [];
  let pending = '';
  toContainer.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
      const message = JSON.parse(pending.slice(0, at)) as { id?: number; method?: string; params?: never };
      pending = pending.slice(at + 1);
      if (message.method === 'initialize') {
        const result = {
          protocolVersion: (message.params as unknown as { protocolVersion: string }).protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'fixture', version: '1' },
        };
        fromContainer.write(frame(1, `${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n`));
      } else if (message.method === 'tools/call') calls.push(message.method);
      else if (message.id !== undefined) {
        // As a 2025 SDK server answers what it does not know (the era probe among them).
        const error = { code: -32601, message: 'Method not found' };
        fromContainer.write(frame(1, `${JSON.stringify({ jsonrpc: '2.0', id: message.id, error })}\n`));
      }
    }
  });
  const docker = {
    modem: { dial: (_: unknown, done: (e: null, s: Duplex) => void) => done(null, engine) },
  } as unknown as Docker;
  const server: ContainedServer = {
    start: async () => {
      const stdio = await attachStdio(docker, { id: 'c1' } as Docker.Container);
      if (breakWhileStarting) {
        // Between the attach and the first message (the container's start, in the runtime).
        engine.destroy(breakWhileStarting);
        await new Promise((resolve) => setImmediate(resolve));
      }
      return stdio;
    },
    onExit: () => {},
    stderr: () => '',
    stop: async () => {},
  };
  const config = { name: 'fixture', transport: 'container', image: 'example/fixture@sha256:0' };
  const upstream = new ContainerUpstream(config as unknown as ContainerServerConfig, server);
  return { upstream, engine, calls };
}

describe('ContainerUpstream when the connection to its container breaks', () => {
  it('fails the call in flight with the reason, at once, and tells the gateway the server is lost', async () => {
    const { upstream, engine, calls } = await attachedServer();
    const closed: string[] = [];
    upstream.onClosed((reason) => closed.push(reason));
    await upstream.start();
    const call = upstream.callTool('slow', {});
    call.catch(() => {});
    await expect.poll(() => calls.length).toBe(1);
    engine.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    // Not "the connection to the server closed", which a clean end of its output says after
    // waiting for the engine to report an exit that may never come.
    await expect(call).rejects.toMatchObject({
      code: 'UPSTREAM_LOST',
      message: "the connection to the server's container broke (read ECONNRESET) before the server answered",
    });
    expect(closed).toEqual(["the connection to the server's container broke (read ECONNRESET)"]);
    await upstream.close();
  });

  it('fails the start with the reason when the connection broke before the server was spoken to', async () => {
    const { upstream } = await attachedServer(new Error('read ECONNRESET'));
    await expect(upstream.start()).rejects.toMatchObject({
      code: 'UPSTREAM_CONNECT',
      message: expect.stringContaining("the connection to the server's container broke (read ECONNRESET)"),
    });
  });
});
