import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, LATEST_PROTOCOL_VERSION, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { SchemaChecks } from '../ports/schema.js';
import { Gateway } from './gateway.js';
import { type SessionLimits, serveHttp } from './http.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const audit: AuditSink = { append: async () => 1 };

let home: string;
let served: Awaited<ReturnType<typeof serveHttp>>;
let gateway: Gateway;
const clients: Client[] = [];
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-http-sessions-'));
  gateway = new Gateway({
    servers: [],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => {
      throw new Error('no servers');
    },
    log: () => {},
    session: 'test',
  });
  await gateway.start();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await served?.close();
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

const serve = async (sessions: SessionLimits) => {
  served = await serveHttp(gateway, {
    address: '127.0.0.1:0',
    resolveToken: (t) => (t === 'alice-token' || t === 'bob-token' ? {} : undefined),
    sessions,
  });
};
const connect = async (token: string) => {
  const client = new Client({ name: 'sessions-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(served.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
};

it('expires a session left idle (a client that went away without ending it)', async () => {
  await serve({ idleMs: 100 });
  // One initialize, then nothing (not even DELETE): written by hand, so no second handshake
  // message can race the 100 ms sweep on a busy machine.
  const opened = await fetch(served.url, {
    method: 'POST',
    headers: {
      authorization: 'Bearer alice-token',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'gone', version: '1' },
      },
    }),
  });
  await opened.text();
  const id = opened.headers.get('mcp-session-id')!;
  expect(id).toBeTruthy();
  // The sweep runs every second at the least; wait for it rather than for a fixed time.
  for (let i = 0; i < 100 && served.sessionCount() > 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(served.sessionCount()).toBe(0);
  const probe = await fetch(served.url, {
    method: 'POST',
    headers: {
      authorization: 'Bearer alice-token',
      'mcp-session-id': id,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(probe.status).toBe(404);
});

it('caps the sessions of one token, evicting its least recently used idle one, and leaves other tokens alone', async () => {
  await serve({ perToken: 2 });
  const first = await connect('alice-token');
  const bobs = await connect('bob-token');
  const second = await connect('alice-token');
  await first.listTools(); // now `second` is alice's least recently used
  const third = await connect('alice-token');
  expect(served.sessionCount()).toBe(3);
  await expect(second.listTools()).rejects.toThrow(/Unknown or expired session/);
  await expect(first.listTools()).resolves.toBeDefined();
  await expect(third.listTools()).resolves.toBeDefined();
  await expect(bobs.listTools()).resolves.toBeDefined();
  // 50 abandoned sessions of one token leave at most the cap behind.
  for (let i = 0; i < 50; i++) await connect('alice-token');
  expect(served.sessionCount()).toBe(3);
});

it('keeps one catalog listener per live session, releases it when the session ends, and warns of no leak', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    await serve({ perToken: 40 });
    const before = gateway.listenerCount('catalogChanged');
    const many = [];
    for (let i = 0; i < 20; i++) many.push(await connect('alice-token'));
    expect(gateway.listenerCount('catalogChanged')).toBe(before + 20);
    for (const client of many) await (client.transport as StreamableHTTPClientTransport).terminateSession();
    for (let i = 0; i < 50 && gateway.listenerCount('catalogChanged') > before; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(gateway.listenerCount('catalogChanged')).toBe(before);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => /MaxListeners/.test(w))).toEqual([]);
  } finally {
    process.off('warning', onWarning);
  }
});
