import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { EraVerdict } from '../config/eras.js';
import type { ContainerServerConfig } from '../config/servers.js';
import type { ContainedServer } from '../ports/upstream.js';
import { ContainerUpstream } from './container.js';
import type { EraMemory } from './era.js';

/**
 * A 2025 server in a fake container, speaking line-delimited JSON-RPC over a pair of pipes, and
 * doing one of the three things real servers do with `server/discover` before `initialize`.
 */
function legacyServer(onProbe: 'answer' | 'silent' | 'exit', log: string[]): ContainedServer {
  let exit: ((reason: string) => void) | undefined;
  return {
    start: async () => {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const send = (message: object) => stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
      let pending = '';
      let ready = false;
      stdin.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
          const message = JSON.parse(pending.slice(0, at)) as {
            id?: number;
            method?: string;
            params?: { protocolVersion?: string };
          };
          pending = pending.slice(at + 1);
          if (message.method) log.push(message.method);
          if (message.method === 'initialize') {
            ready = true;
            send({
              id: message.id,
              result: {
                protocolVersion: message.params?.protocolVersion,
                capabilities: { tools: {} },
                serverInfo: { name: 'l', version: '1' },
              },
            });
          } else if (!ready && message.id !== undefined) {
            if (onProbe === 'exit') {
              stdout.end();
              exit?.('exited with code 1');
            } else if (onProbe === 'answer')
              send({ id: message.id, error: { code: -32601, message: 'Method not found' } });
          } else if (message.method === 'tools/list') send({ id: message.id, result: { tools: [] } });
        }
      });
      return { stdin, stdout };
    },
    onExit: (listener) => {
      exit = listener;
    },
    stderr: () => '',
    stop: async () => {},
  };
}

const config = {
  name: 'legacy',
  transport: 'container',
  image: 'example/legacy@sha256:0',
  image_id: `sha256:${'0'.repeat(64)}`,
  egress: { mode: 'deny' },
} as ContainerServerConfig;

function memory(initial?: EraVerdict) {
  const kept = new Map<string, unknown>(initial ? [['legacy', initial]] : []);
  const eras: EraMemory = {
    recall: async () => kept.get('legacy') as EraVerdict | undefined,
    remember: async (_config, verdict) => void kept.set('legacy', verdict),
    forget: async () => void kept.delete('legacy'),
  };
  return { kept, eras };
}

const timeouts = { connectMs: 2_000, listMs: 1_000, closeMs: 500 };

describe('a contained server in its era (the probe over the container stdio)', () => {
  it('a 2025 server that answers the probe with "method not found" is 2025 at once', async () => {
    const log: string[] = [];
    const { kept, eras } = memory();
    const upstream = new ContainerUpstream(config, legacyServer('answer', log), timeouts, eras);
    const started = Date.now();
    await upstream.start();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(upstream.era()).toBe('legacy');
    expect(log.slice(0, 2)).toEqual(['server/discover', 'initialize']);
    expect(kept.get('legacy')).toEqual({ era: 'legacy' });
    await upstream.close();
  });

  it('a silent one is 2025 after the probe timeout, on the same pipe (it is probed as a pipe, not as HTTP)', async () => {
    const log: string[] = [];
    const upstream = new ContainerUpstream(config, legacyServer('silent', log), timeouts, memory().eras);
    await upstream.start();
    expect(upstream.era()).toBe('legacy');
    expect(log.slice(0, 2)).toEqual(['server/discover', 'initialize']);
    await upstream.close();
  });

  it('one that exits on the probe is started again in a fresh container and spoken to in 2025', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const { kept, eras } = memory();
    const closed: string[] = [];
    const upstream = new ContainerUpstream(config, legacyServer('exit', first), timeouts, eras, () =>
      legacyServer('exit', second),
    );
    upstream.onClosed((reason) => closed.push(reason));
    await upstream.start();
    expect(upstream.era()).toBe('legacy');
    expect(first).toEqual(['server/discover']);
    expect(second.slice(0, 1)).toEqual(['initialize']);
    expect(kept.get('legacy')).toEqual({ era: 'legacy' });
    // The spent container's exit is not the running server's loss.
    expect(closed).toEqual([]);
    expect((await upstream.listTools()).tools).toEqual([]);
    await upstream.close();
  });

  it('with a kept 2025 verdict nothing is probed', async () => {
    const log: string[] = [];
    const { eras } = memory({ era: 'legacy', registration: 'x', checked_at: new Date().toISOString() });
    const upstream = new ContainerUpstream(config, legacyServer('exit', log), timeouts, eras);
    await upstream.start();
    expect(log[0]).toBe('initialize');
    await upstream.close();
  });
});
