import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { type HttpServerConfig, ServerStore } from '@ringfence/gateway/config';
import { runGateway } from '@ringfence/gateway/serve';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { servingDeps } from './serving.js';

// Port 1 on loopback: nothing listens, so a start fails at once and nothing leaves the machine.
const remote = (name: string): HttpServerConfig => ({
  name,
  transport: 'http',
  url: 'http://127.0.0.1:1/mcp',
});

let home: string;
let savedHome: string | undefined;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-serving-'));
  savedHome = process.env.RINGFENCE_HOME;
  process.env.RINGFENCE_HOME = home;
});
afterEach(async () => {
  if (savedHome === undefined) delete process.env.RINGFENCE_HOME;
  else process.env.RINGFENCE_HOME = savedHome;
  await rm(home, { recursive: true, force: true });
});

describe('servingDeps reads the registrations once', () => {
  it('serves what it read, even when mcp-servers.json changes before the gateway starts', async () => {
    const store = new ServerStore(home);
    await store.add(remote('first'));
    const deps = await servingDeps('once-a');
    try {
      // Changed between the start-up's dependencies and the gateway: a second read would see it.
      await store.remove('first');
      await store.add(remote('second'));
      const lines: string[] = [];
      const stdin = new PassThrough();
      stdin.end();
      const running = await runGateway({
        ...deps.gatewayOptions,
        log: (line) => lines.push(line),
        stdin,
        stdout: new PassThrough(),
      });
      await running.close();
      expect(lines.join('\n')).toMatch(/first failed to start and is skipped/);
      expect(lines.join('\n')).not.toMatch(/second/);
    } finally {
      await deps.close();
    }
  });

  it('refuses an --only that names no server before opening anything, with the command to list them', async () => {
    await new ServerStore(home).add(remote('docs'));
    await expect(servingDeps('once-b', { only: 'doc' })).rejects.toThrow(
      '--only doc: no server of that name is registered (registered: docs). See them with: ringfence mcp ls',
    );
  });
});
