import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { rawRequest } from '../local-http/__fixtures__/raw-request.js';
import { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { SchemaChecks } from '../ports/schema.js';
import { Gateway } from './gateway.js';
import { serveHttp } from './http.js';
import { SERVER_INFO } from './server-info.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const audit: AuditSink = { append: async () => 1 };

let home: string;
let gateway: Gateway;
let served: Awaited<ReturnType<typeof serveHttp>> | undefined;
let serving = true;
let port = 0;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-http-health-'));
  gateway = new Gateway({
    servers: [],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => {
      throw new Error('no servers');
    },
    log: () => {},
    session: 'secret-session-name',
  });
  await gateway.start();
  serving = true;
  served = await serveHttp(gateway, {
    address: '127.0.0.1:0',
    resolveToken: (t) => (t === 'the-token' ? {} : undefined),
    serving: () => serving,
  });
  port = Number(new URL(served.url).port);
});
afterEach(async () => {
  await served?.close();
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

it('answers GET /healthz without a token, and says only "ok"', async () => {
  const answer = await rawRequest(port, { path: '/healthz' });
  expect(answer.status).toBe(200);
  expect(answer.body).toBe('ok\n');
  const said = JSON.stringify(answer);
  // Nothing about what is served: no name, version, session or count.
  for (const secret of ['ringfence', SERVER_INFO.version, 'secret-session-name', 'mcp'])
    expect(said.toLowerCase()).not.toContain(secret.toLowerCase());
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers.server).toBeUndefined();
});

it('answers whatever Host a load balancer sends, and HEAD with no body', async () => {
  const answer = await rawRequest(port, { path: '/healthz', headers: { host: 'lb.example.internal:443' } });
  expect(answer.status).toBe(200);
  const head = await rawRequest(port, { method: 'HEAD', path: '/healthz' });
  expect([head.status, head.body]).toEqual([200, '']);
});

it('answers 503 when the gateway cannot serve (stopping)', async () => {
  serving = false;
  const answer = await rawRequest(port, { path: '/healthz' });
  expect(answer.status).toBe(503);
  expect(answer.body).toMatch(/^unavailable: /);
  expect(answer.body).not.toContain('secret-session-name');
});

it.each([
  ['a path that resolves elsewhere', 'GET', '/healthz/../mcp'],
  ['a query', 'GET', '/healthz?x'],
  ['another spelling', 'GET', '/HEALTHZ'],
  ['a trailing slash', 'GET', '/healthz/'],
  ['a POST', 'POST', '/healthz'],
  ['a DELETE', 'DELETE', '/healthz'],
])('does not pass %s without a token', async (_what, method, path) => {
  const answer = await rawRequest(port, {
    method,
    path,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) : undefined,
  });
  expect(answer.status).toBe(401);
  expect(answer.body).not.toBe('ok\n');
});

it('still refuses a foreign Host for anything but the probe', async () => {
  const answer = await rawRequest(port, {
    method: 'POST',
    path: '/healthz',
    headers: { host: 'evil.example:80', authorization: 'Bearer the-token' },
  });
  expect(answer.status).toBe(403);
});
