import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { PinStore } from '../pins/store.js';
import { FakeUpstream } from '../ports/__fixtures__/fake-upstream.js';
import type { AuditSink } from '../ports/audit.js';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { ClientMethod } from './dispatch.js';
import { Gateway } from './gateway.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const server: HttpServerConfig = { name: 'files', transport: 'http', url: 'https://example.invalid/mcp' };

/** A server that offers every kind of definition and every request the gateway forwards. */
const everything = () =>
  new FakeUpstream('files', {
    tools: [{ name: 'read', description: 'read', inputSchema: { type: 'object' } }],
    prompts: [{ name: 'brief', description: 'brief', arguments: [{ name: 'topic' }] }],
    resources: [{ uri: 'file:///notes.txt', name: 'notes' }],
    resourceTemplates: [{ uriTemplate: 'file:///{path}', name: 'any file' }],
    readResource: async (uri) => ({ contents: [{ uri, text: 'x' }] }),
    complete: async () => ({ completion: { values: ['a'] } }),
    subscribeResource: async () => {},
    setLoggingLevel: async () => {},
  });

/** The policy's rules deny every request: the gateway may list, but nothing may reach the server. */
const DENY_ALL: PolicyView = {
  ...LOCAL_ONLY,
  decideCall: () => ({ action: 'deny', rule: 'deny-all', reason: 'this test denies everything' }),
};

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-dispatch-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

async function started(upstream: FakeUpstream, policy: PolicyView): Promise<Gateway> {
  const audit: AuditSink = { append: async () => 1 };
  const gateway = new Gateway({
    servers: [server],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => upstream,
    log: () => {},
    session: 'test',
    policy,
  });
  await gateway.start();
  return gateway;
}

/** One request of every forwarded method, named as a client of this gateway names them. */
async function everyForwardedRequest(gateway: Gateway): Promise<PromiseSettledResult<unknown>[]> {
  const caller = { caller: {} };
  const [tool] = (await gateway.dispatch('tools/list', {}, caller)).tools;
  const [prompt] = (await gateway.dispatch('prompts/list', {}, caller)).prompts;
  const [resource] = (await gateway.dispatch('resources/list', {}, caller)).resources;
  const uri = String(resource?.uri);
  return Promise.allSettled([
    gateway.dispatch('tools/call', { name: String(tool?.name), arguments: {} }, caller),
    gateway.dispatch('prompts/get', { name: String(prompt?.name), arguments: { topic: 't' } }, caller),
    gateway.dispatch('resources/read', { uri }, caller),
    gateway.dispatch('resources/subscribe', { uri }, caller),
    gateway.dispatch(
      'completion/complete',
      { ref: { type: 'ref/prompt', name: String(prompt?.name) }, argument: { name: 'topic', value: 'x' } },
      caller,
    ),
    gateway.dispatch('logging/setLevel', { level: 'info' }, caller),
  ]);
}

describe('dispatch', () => {
  it('sends each forwarded method to the server once when the rules allow it', async () => {
    const upstream = everything();
    const gateway = await started(upstream, LOCAL_ONLY);
    try {
      const settled = await everyForwardedRequest(gateway);
      expect(settled.map((s) => s.status)).toEqual(Array(6).fill('fulfilled'));
      expect(upstream.received.map((r) => r.method).sort()).toEqual(
        [
          'completion/complete',
          'logging/setLevel',
          'prompts/get',
          'resources/read',
          'resources/subscribe',
          'tools/call',
        ].sort(),
      );
    } finally {
      await gateway.close();
    }
  });

  it('lets no request of any method reach the server when the rules deny it', async () => {
    const upstream = everything();
    const gateway = await started(upstream, DENY_ALL);
    try {
      const settled = await everyForwardedRequest(gateway);
      // A call is refused with an error result, every other method with a thrown refusal.
      expect(settled[0]).toMatchObject({ status: 'fulfilled', value: { isError: true } });
      expect(upstream.received).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it('refuses a method it does not serve, inherited member names included, and forwards nothing', async () => {
    const upstream = everything();
    const gateway = await started(upstream, LOCAL_ONLY);
    try {
      for (const method of [
        'constructor',
        '__proto__',
        'toString',
        'hasOwnProperty',
        'tools/call ',
        'sampling/createMessage',
      ]) {
        await expect(
          gateway.dispatch(method as ClientMethod, { name: 'files_read', uri: 'x' } as never, { caller: {} }),
        ).rejects.toMatchObject({ code: 'REFUSED', message: expect.stringContaining('is not served') });
      }
      expect(upstream.received).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
