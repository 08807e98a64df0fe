import { describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { selectServers } from './run.js';

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
